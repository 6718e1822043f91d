"""e2e 4: a repeated long prompt is served from the prefix cache (cached_tokens in the usage,
zinfer_prefix_cache_hit_rate > 0 in /metrics) with output identical to the first time; a new
prompt is not; a cache_salt shares blocks only with its own salt."""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, ZmqClient, check, check_equal, log, main_wrapper, metric, metrics,  # noqa: E402
                        parse_args, post_json, wait_idle)

BLOCK_SIZE = 16
MAX_TOKENS = 16
LONG_PROMPT = " ".join(f"Paragraph {i}: the committee reviewed item {i * 17} and approved it without changes."
                       for i in range(30))
OTHER_PROMPT = " ".join(f"Chapter {i}: a different story about {i * 5} lighthouses." for i in range(20))


def complete(port, prompt, **extra):
    status, body = post_json(port, "/v1/completions", {
        "prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True,
        "return_token_ids": True, **extra})
    check_equal(status, 200, f"completion: {body!r}")
    usage = body["usage"]
    cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)
    return body["choices"][0]["token_ids"], usage["prompt_tokens"], cached


def body(args):
    with Server(args, cache={"block_size": BLOCK_SIZE, "enable_prefix_caching": True}) as server:
        check_equal(metric(metrics(server.port), "zinfer_prefix_cache_hit_rate"), 0.0, "hit rate of a fresh server")

        first, prompt_tokens, cached_first = complete(server.port, LONG_PROMPT)
        check(prompt_tokens >= 10 * BLOCK_SIZE, f"the long prompt has only {prompt_tokens} tokens")
        check_equal(cached_first, 0, "cached tokens of the first request")
        wait_idle(server.port)

        second, prompt_tokens_2, cached_second = complete(server.port, LONG_PROMPT)
        check_equal(prompt_tokens_2, prompt_tokens, "prompt tokens of the repeat")
        check_equal(second, first, "the repeat's greedy tokens vs the first time")
        # Every full block of the prompt can come from the cache, except that the last prompt token
        # must be computed to get logits: at least all full blocks before it.
        full_blocks_tokens = ((prompt_tokens - 1) // BLOCK_SIZE) * BLOCK_SIZE
        check(cached_second >= full_blocks_tokens,
              f"the repeat had {cached_second} cached prompt tokens; expected at least {full_blocks_tokens} "
              f"of {prompt_tokens}")
        check(cached_second < prompt_tokens, f"all {prompt_tokens} prompt tokens cached: none left to compute")
        m = wait_idle(server.port)
        hit_rate = metric(m, "zinfer_prefix_cache_hit_rate")
        check(hit_rate > 0, f"zinfer_prefix_cache_hit_rate is {hit_rate} after a repeated prompt")
        log(f"repeat: {cached_second} of {prompt_tokens} prompt tokens cached, hit rate {hit_rate:.3f}, same output")

        # The same prefix over ZeroMQ also hits the cache and gives the same tokens.
        zc = ZmqClient(server.zmq_endpoint)
        try:
            zc.submit(5, prompt=LONG_PROMPT, max_tokens=MAX_TOKENS, temperature=0.0, ignore_eos=True)
            r = zc.collect([5])[5]
        finally:
            zc.close()
        check("error" not in r, f"ZeroMQ repeat failed: {r!r}")
        check_equal(r["token_ids"], first, "ZeroMQ repeat's tokens")
        check(r["cached_tokens"] >= full_blocks_tokens, f"ZeroMQ repeat's cached_tokens {r['cached_tokens']}")

        # A prompt that shares no block is computed in full.
        _, _, cached_other = complete(server.port, OTHER_PROMPT)
        check_equal(cached_other, 0, "cached tokens of an unrelated prompt")
        wait_idle(server.port)
        log("an unrelated prompt: nothing cached; every block free afterwards")

        # vLLM's cache_salt: the same prompt under a salt shares nothing with the unsalted cache
        # nor with another salt, and hits its own salt's blocks; the tokens never change.
        salted, _, cached_salted = complete(server.port, LONG_PROMPT, cache_salt="tenant-a")
        check_equal(cached_salted, 0, "cached tokens of the long prompt under a new salt")
        wait_idle(server.port)
        other_salt, _, cached_other_salt = complete(server.port, LONG_PROMPT, cache_salt="tenant-b")
        check_equal(cached_other_salt, 0, "cached tokens of the long prompt under another salt")
        wait_idle(server.port)
        again, _, cached_again = complete(server.port, LONG_PROMPT, cache_salt="tenant-a")
        check(cached_again >= full_blocks_tokens, f"the salted repeat had {cached_again} cached prompt tokens")
        check_equal([salted, other_salt, again], [first] * 3, "tokens under salts")
        status, reply = post_json(server.port, "/v1/completions", {"prompt": "x", "cache_salt": ""})
        check_equal(status, 400, f"an empty cache_salt: {reply!r}")
        check_equal(reply["error"]["param"], "cache_salt", "the param of the empty cache_salt's error")
        log("cache_salt: no sharing across salts, hits within one")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
