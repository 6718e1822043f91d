"""e2e: SIGTERM drains (issue 21). With streams in flight, `zinfer serve` stops taking new requests
(503, /health 503), lets the short ones finish with [DONE], ends the long ones after
[server] shutdown_grace_s with an SSE error event and [DONE] (a ZeroMQ one with an ErrorReply 503
"shutdown"), and exits 0 within the grace period plus 5 s, with a summary line."""

# Invariant 36 (docs/architecture.md): shutdown drains, and ends nothing in silence.

import os
import re
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, ZmqClient, check, check_equal, http_request, log, main_wrapper,  # noqa: E402
                        metric, metrics, parse_args, parse_sse, post_json)

GRACE_S = 10
PROMPT = "Tell me a very long story about a dragon who"


def body(args):
    with Server(args, server={"shutdown_grace_s": GRACE_S}, log_level="info") as server:
        results = {}

        def stream(key, max_tokens):
            results[key] = http_request(server.port, "POST", "/v1/completions",
                                        {"prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0,
                                         "ignore_eos": True, "stream": True}, timeout=120)

        threads = [threading.Thread(target=stream, args=("long", 30000)),
                   threading.Thread(target=stream, args=("short", 40))]
        for t in threads:
            t.start()
        zc = ZmqClient(server.zmq_endpoint)
        zc.submit(7, prompt=PROMPT, max_tokens=30000, temperature=0.0, ignore_eos=True)
        deadline = time.monotonic() + 120
        while metric(metrics(server.port), "zinfer_num_requests_running") < 3:
            check(time.monotonic() < deadline, "the three requests did not all start within 120 s")
            time.sleep(0.05)

        log("SIGTERM")
        sent = time.monotonic()
        os.kill(server.proc.pid, signal.SIGTERM)
        # New work is refused at once (the gateway hears $TERM within milliseconds).
        status = 200
        while status == 200 and time.monotonic() - sent < 5:
            status, _ = post_json(server.port, "/v1/completions", {"prompt": "late", "max_tokens": 1})
        check_equal(status, 503, "a request after SIGTERM")
        check_equal(http_request(server.port, "GET", "/health")[0], 503, "/health while draining")

        for t in threads:
            t.join(GRACE_S + 30)
        status, _, raw = results["short"]
        check_equal(status, 200, "the short stream's status")
        events = parse_sse(raw)
        check(all("error" not in e for e in events), f"the short stream got an error: {events[-1]!r}")
        check_equal(events[-1]["choices"][0]["finish_reason"], "length", "the short stream's finish")

        status, _, raw = results["long"]
        check_equal(status, 200, "the long stream's status")
        events = parse_sse(raw)  # ends with [DONE]
        check("error" in events[-1], f"the long stream's last event is not an error: {events[-1]!r}")
        check_equal(events[-1]["error"]["code"], 503, "the long stream's error code")

        r = zc.collect([7], timeout_s=GRACE_S + 30)[7]
        check("error" in r, f"the ZeroMQ request ended without an ErrorReply: {r!r}")
        check_equal((r["error"]["code"], r["error"]["kind"]), (503, "shutdown"), "the ZeroMQ request's ErrorReply")
        zc.close()

        server.proc.wait(GRACE_S + 5 - (time.monotonic() - sent) + 1)
        took = time.monotonic() - sent
        check_equal(server.proc.returncode, 0, "the exit status after SIGTERM")
        check(took <= GRACE_S + 5, f"the server took {took:.1f} s to exit (grace {GRACE_S} s)")
        with open(server.log_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        # The first request after SIGTERM may have come in before the gateway heard $TERM: it is
        # counted in flight and finished (max_tokens 1).
        summary = re.search(r"(\d+) requests were in flight, (\d+) finished, (\d+) ended with an error", text)
        check(summary, f"no summary line in the log: ...{text[-1500:]}")
        in_flight, finished, ended = map(int, summary.groups())
        check_equal(ended, 2, "requests ended with an error (the summary line)")
        check(in_flight in (3, 4) and finished == in_flight - 2, f"the summary line: {summary.group(0)}")
        log(f"exited 0 after {took:.1f} s")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
