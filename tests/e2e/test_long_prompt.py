"""e2e: one long prompt does not stall short ones (issue 21). A 40,900-token prompt is sent, then
twelve 4-token requests beside it, on the default configuration (partial prefills on: the long
prompt shares each step's budget with the prompts in line, and short prompts start beside it). Each
short request must get its first token within a bound made of a short request's TTFT measured alone
on the same server: the long prompt's steps are longer than an idle server's, so the bound also
allows a few of those steps (measured: the TTFT of one chunk-sized prompt alone), and every short
request must finish while the long prompt is still in its prefill (before partial prefills they
waited for its whole prefill). The long request is then dropped (its client disconnects), so the
test does not wait out a 40,900-token prefill on the CPU."""

import os
import socket
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
CHUNK_TOKENS = 2048  # the default max_num_batched_tokens


def timed_stream(port, body, out, key):
    """POST a streaming completion; records (start, first token, end) monotonic times in out[key]."""
    start = time.monotonic()
    conn = http.client.HTTPConnection(HOST, port, timeout=900)
    try:
        conn.connect()
        out[f"{key}_sock"] = conn.sock  # lets the main thread drop the request
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
        # One step of the long prompt's size: a prompt of one chunk (max_num_batched_tokens) alone.
        out = {}
        chunk = {"prompt": [(11 * i) % 50000 + 10 for i in range(CHUNK_TOKENS)], "max_tokens": 1,
                 "temperature": 0, "ignore_eos": True, "stream": True}
        timed_stream(server.port, chunk, out, "chunk")
        check("error" not in out["chunk"], f"chunk-sized request alone: {out['chunk']}")
        step_estimate = out["chunk"]["first"] - out["chunk"]["start"]
        log(f"a {CHUNK_TOKENS}-token prompt alone: TTFT {step_estimate * 1000:.0f} ms")

        results = {}
        long_body = {"prompt": [(7 * i) % 50000 + 10 for i in range(LONG_TOKENS)], "max_tokens": 2,
                     "temperature": 0, "ignore_eos": True, "stream": True}
        long_thread = threading.Thread(target=timed_stream, args=(server.port, long_body, results, "long"))
        start_long = time.monotonic()
        long_thread.start()
        time.sleep(1.0)  # the long prompt is in (its ids need no tokenizing) and computing
        threads = [threading.Thread(target=timed_stream, args=(server.port, short_body(i), results, i))
                   for i in range(SHORTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Every short request is done: the long prompt must still be in its prefill.
        still_prefilling = "long" not in results
        results["long_sock"].shutdown(socket.SHUT_RDWR)  # drop it: the server aborts it
        long_thread.join()
        for i in range(SHORTS):
            r = results[i]
            check("error" not in r and r["status"] == 200 and r["first"] is not None, f"request {i}: {r}")
        ttfts = sorted(results[i]["first"] - results[i]["start"] for i in range(SHORTS))
        last_end = max(results[i]["end"] for i in range(SHORTS))
        bound = 20 * ttft_alone + 16 * step_estimate
        log(f"short TTFTs beside the {LONG_TOKENS}-token prompt: median {ttfts[SHORTS // 2] * 1000:.0f} ms, "
            f"max {ttfts[-1] * 1000:.0f} ms (bound {bound * 1000:.0f} ms = 20 x {ttft_alone * 1000:.1f} ms alone "
            f"+ 16 chunk steps); the last ended {last_end - start_long:.1f} s after the long prompt was sent")
        check(ttfts[-1] <= bound, f"a short request's TTFT {ttfts[-1]:.2f} s is over the bound {bound:.2f} s")
        check(still_prefilling, "every short request finishes while the long prompt is still in its prefill "
                                f"(it ended first: {results.get('long')})")
        wait_idle(server.port)


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
