"""e2e 2: 64 concurrent streaming requests of mixed prompt and output lengths (ignore_eos, so the
lengths are exact) all finish with the right number of tokens, the right usage and well-formed
streams; afterwards nothing runs and every KV block is free."""

import os
import sys
import threading

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, check, check_equal, log, main_wrapper, metric, metrics, parse_args,  # noqa: E402
                        post_json, stream_request, wait_idle)

NUM_REQUESTS = 64
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def prompt_of(i):
    """Prompts of 1 to ~60 words, different for each request."""
    n = 1 + (i * 7) % 60
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(n)) + f" #{i}"


def max_tokens_of(i):
    return 1 + (i * 13) % 40  # 1..40, mixed


def run_one(port, i, prompt_tokens, results):
    try:
        chat = i % 4 == 3  # a quarter through the chat endpoint
        body = {"max_tokens": max_tokens_of(i), "temperature": 0, "ignore_eos": True, "stream": True,
                "stream_options": {"include_usage": True}}
        if chat:
            body["messages"] = [{"role": "user", "content": prompt_of(i)}]
            path = "/v1/chat/completions"
        else:
            body["prompt"] = prompt_of(i)
            body["return_token_ids"] = True
            path = "/v1/completions"
        events = stream_request(port, path, body, timeout=600)
        *chunks, usage_chunk = events
        usage = usage_chunk.get("usage")
        check_equal(usage_chunk.get("choices"), [], f"request {i}: the usage chunk's choices")
        check_equal(usage["completion_tokens"], max_tokens_of(i), f"request {i}: usage.completion_tokens")
        check_equal(usage["total_tokens"], usage["prompt_tokens"] + usage["completion_tokens"],
                    f"request {i}: usage.total_tokens")
        if not chat:
            token_ids = [t for c in chunks for t in c["choices"][0]["token_ids"]]
            check_equal(len(token_ids), max_tokens_of(i), f"request {i}: streamed tokens")
            check_equal(usage["prompt_tokens"], prompt_tokens[i], f"request {i}: usage.prompt_tokens vs alone")
        finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
        check_equal(finish[-1], "length", f"request {i}: last finish_reason")
        check(all(f is None for f in finish[:-1]), f"request {i}: a finish_reason before the last chunk: {finish}")
        results[i] = usage
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        results[i] = e


def body(args):
    # max_num_seqs at 64 so that all requests can share one batch; the default pool holds them.
    with Server(args, scheduler={"max_num_seqs": 64}) as server:
        before = metrics(server.port)
        # Each completions prompt's token count when sent alone (1 token, not streamed).
        prompt_tokens = {}
        for i in range(NUM_REQUESTS):
            if i % 4 != 3:
                status, one = post_json(server.port, "/v1/completions",
                                        {"prompt": prompt_of(i), "max_tokens": 1, "temperature": 0})
                check_equal(status, 200, f"request {i} alone: {one!r}")
                prompt_tokens[i] = one["usage"]["prompt_tokens"]
        base = metrics(server.port)

        results = {}
        threads = [threading.Thread(target=run_one, args=(server.port, i, prompt_tokens, results), daemon=True)
                   for i in range(NUM_REQUESTS)]
        for t in threads:
            t.start()
        # Watch the running gauge meanwhile: continuous batching puts many of them in one batch.
        most_running = 0
        while any(t.is_alive() for t in threads):
            most_running = max(most_running, metrics(server.port).get("zinfer_num_requests_running", 0))
            threads[-1].join(timeout=0.02)
        for t in threads:
            t.join(timeout=1)
        check(not any(t.is_alive() for t in threads), "some streams did not finish")
        failures = {i: r for i, r in results.items() if isinstance(r, Exception)}
        for i, e in sorted(failures.items())[:5]:
            log(f"request {i}: {e}")
        check(not failures, f"{len(failures)} of {NUM_REQUESTS} streams failed (first ones above)")
        check_equal(len(results), NUM_REQUESTS, "finished streams")
        log(f"{NUM_REQUESTS} concurrent streams finished with exact lengths and usage; up to {most_running:.0f} "
            f"ran in one batch")
        check(most_running >= 2, f"at most {most_running} request ran at a time: no batching")

        after = wait_idle(server.port)
        expected_generated = sum(max_tokens_of(i) for i in range(NUM_REQUESTS))
        check_equal(metric(after, "zinfer_generation_tokens_total") - metric(base, "zinfer_generation_tokens_total"),
                    float(expected_generated), "zinfer_generation_tokens_total growth")
        expected_prompt = sum(r["prompt_tokens"] for r in results.values())
        check_equal(metric(after, "zinfer_prompt_tokens_total") - metric(base, "zinfer_prompt_tokens_total"),
                    float(expected_prompt), "zinfer_prompt_tokens_total growth")
        check(metric(before, "zinfer_num_requests_running") == 0, "nothing ran before the test")
        check(server.alive(), "the server is still running")
        log("metrics: token counters match the usage; nothing running; every KV block free")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
