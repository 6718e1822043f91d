"""e2e: one long prompt does not stall short ones (issue 21). A 40,900-token prompt is sent, then
twelve 4-token requests beside it, on the default configuration (partial prefills on: the long
prompt shares each step's budget with the prompts in line, and short prompts start beside it). Each
short request must get its first token within a bound made of a short request's TTFT measured alone
on the same server: the long prompt's steps are longer than an idle server's, so the bound also
allows a few of those steps (measured: the long prompt's own time per chunk), and every short
request must finish before the long prompt's first token (before partial prefills they waited for
its whole prefill)."""

import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http.client  # noqa: E402
import json  # noqa: E402

from e2e_common import HOST, Server, check, log, main_wrapper, parse_args, wait_idle  # noqa: E402

LONG_TOKENS = 40900
MAX_MODEL_LEN = 40960
SHORTS = 12


def timed_stream(port, body, out, key):
    """POST a streaming completion; records (start, first token, end) monotonic times in out[key]."""
    start = time.monotonic()
    conn = http.client.HTTPConnection(HOST, port, timeout=900)
    try:
        conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        first = None
        tokens = 0
        buf = b""
        while True:
            chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(1)
            if not chunk:
                break
            buf += chunk
            while b"\n\n" in buf:
                event, buf = buf.split(b"\n\n", 1)
                data = event[len(b"data: "):]
                if data == b"[DONE]":
                    continue
                payload = json.loads(data)
                if "error" in payload:
                    raise RuntimeError(f"stream error: {payload}")
                if payload["choices"] and payload["choices"][0].get("text"):
                    tokens += 1
                    if first is None:
                        first = time.monotonic()
        out[key] = {"status": resp.status, "start": start, "first": first, "end": time.monotonic(), "events": tokens}
    except Exception as e:  # reported by the main thread
        out[key] = {"error": repr(e)}
    finally:
        conn.close()


def short_body(i):
    return {"prompt": [1000 + i, 2000 + i, 3000 + i, 4000 + i], "max_tokens": 4, "temperature": 0,
            "ignore_eos": True, "stream": True}


def body(args):
    with Server(args, model={"max_model_len": MAX_MODEL_LEN}) as server:
        # A short request alone: the reference TTFT (best of three, after a warm-up).
        alone = []
        for i in range(4):
            out = {}
            timed_stream(server.port, short_body(100 + i), out, "x")
            check("error" not in out["x"], f"short request alone: {out['x']}")
            alone.append(out["x"]["first"] - out["x"]["start"])
        ttft_alone = min(alone[1:])
        log(f"short request alone: TTFT {ttft_alone * 1000:.1f} ms")

        results = {}
        long_body = {"prompt": [(7 * i) % 50000 + 10 for i in range(LONG_TOKENS)], "max_tokens": 2,
                     "temperature": 0, "ignore_eos": True, "stream": True}
        long_thread = threading.Thread(target=timed_stream, args=(server.port, long_body, results, "long"))
        long_thread.start()
        time.sleep(1.0)  # the long prompt is in (its ids need no tokenizing) and computing
        threads = [threading.Thread(target=timed_stream, args=(server.port, short_body(i), results, i))
                   for i in range(SHORTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        long_thread.join()
        for key, r in results.items():
            check("error" not in r and r["status"] == 200 and r["first"] is not None, f"request {key}: {r}")
        long = results["long"]
        long_ttft = long["first"] - long["start"]
        ttfts = sorted(results[i]["first"] - results[i]["start"] for i in range(SHORTS))
        ends = [results[i]["end"] for i in range(SHORTS)]
        # The long prompt's time per chunk while alone and then beside the short ones: its prefill
        # over the number of steps it took at least (its chunks are max_num_batched_tokens at most).
        step_estimate = long_ttft / (LONG_TOKENS / 2048)
        bound = 20 * ttft_alone + 8 * step_estimate
        log(f"long prompt ({LONG_TOKENS} tokens): TTFT {long_ttft:.1f} s (~{step_estimate * 1000:.0f} ms a step); "
            f"short TTFTs beside it: median {ttfts[SHORTS // 2] * 1000:.0f} ms, max {ttfts[-1] * 1000:.0f} ms "
            f"(bound {bound * 1000:.0f} ms = 20 x {ttft_alone * 1000:.1f} ms alone + 8 steps)")
        check(ttfts[-1] <= bound, f"a short request's TTFT {ttfts[-1]:.2f} s is over the bound {bound:.2f} s")
        check(max(ends) < long["first"],
              "every short request finishes before the long prompt's first token "
              f"(last short end {max(ends) - long['start']:.1f} s, long first token {long_ttft:.1f} s)")
        wait_idle(server.port)


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
