"""e2e 5: abort and client disconnect. A streaming HTTP client that closes its socket mid-stream, a
non-streaming one that hangs up while waiting, a ZeroMQ Abort and a ZeroMQ client that goes
away: each time the request stops long before its max_tokens, its blocks are freed (kv usage 0,
nothing running) and the server goes on serving."""

# Invariant 2 (docs/architecture.md): a client that goes away becomes an Abort; its blocks are freed.

import json
import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (HOST, TEXT_DELTA, ABORT, Server, ZmqClient, check, check_equal, log,  # noqa: E402
                        main_wrapper, metric, metrics, parse_args, post_json, wait_idle)

# Long enough that the request cannot finish on its own during the test: only an abort ends it.
LONG = 30000
PROMPT = "Tell me a very long story about a dragon who"


def raw_post(port, path, body):
    """Sends a POST on a raw socket (so that the test decides exactly when it closes)."""
    data = json.dumps(body).encode()
    sock = socket.create_connection((HOST, port), timeout=120)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    return sock


def read_until_events(sock, count):
    """Reads the streamed response until `count` SSE data events have arrived."""
    buf = b""
    while buf.count(b"data: ") < count:
        chunk = sock.recv(65536)
        check(chunk, f"the server closed the stream after {buf.count(b'data: ')} events: {buf[-300:]!r}")
        buf += chunk
    check(buf.startswith(b"HTTP/1.1 200"), f"stream status line: {buf[:100]!r}")
    return buf


def wait_running(port, timeout=120):
    """Until /metrics (a snapshot refreshed every ~100 ms) shows the request running."""
    deadline = time.monotonic() + timeout
    while metric(metrics(port), "zinfer_num_requests_running") < 1:
        check(time.monotonic() < deadline, f"no request running within {timeout} s")
        time.sleep(0.05)


# The engine's step counter (ZeroMQ Stats) stops when nothing runs, so the steps it takes after the
# client left measure how quickly the request was stopped. "Within a step or so" plus the time the
# gateway's thread and the messages take on a loaded 2-core machine (where a step of this tiny
# model takes ~40 ms); a request that was not stopped would run ~LONG steps.
MAX_STEPS_AFTER_CLOSE = 50


def engine_steps(server):
    return server.stats_client.stats()["steps"]


def fresh_engine_steps(server, timeout=60):
    """The engine's step count from a snapshot just taken: the gateway's Stats are a snapshot the
    scheduler refreshes every ~100 ms, so wait for the value to change (the request runs) and take
    the new one, at most one poll interval old."""
    first = engine_steps(server)
    deadline = time.monotonic() + timeout
    while True:
        steps = engine_steps(server)
        if steps != first:
            return steps
        check(time.monotonic() < deadline, f"the engine's step count stayed at {first} for {timeout} s")
        time.sleep(0.005)


def check_freed(server, what, steps_at_close):
    wait_idle(server.port, timeout=60)
    steps = engine_steps(server) - steps_at_close
    log(f"{what}: blocks freed, nothing running; the engine ran {steps} more steps after the client left")
    check(steps <= MAX_STEPS_AFTER_CLOSE, f"{what}: the engine ran {steps} steps after the client left")


def streaming_disconnect(server):
    aborted_before = metrics(server.port).get('zinfer_request_success_total{finished_reason="abort"}', 0)
    sock = raw_post(server.port, "/v1/completions", {"prompt": PROMPT, "max_tokens": LONG, "temperature": 0,
                                                     "ignore_eos": True, "stream": True})
    read_until_events(sock, 3)
    wait_running(server.port)
    check(metric(metrics(server.port), "zinfer_kv_cache_usage_ratio") > 0, "the running stream holds KV blocks")
    steps = fresh_engine_steps(server)
    sock.close()
    check_freed(server, "streaming client closed its socket", steps)
    check(metrics(server.port).get('zinfer_request_success_total{finished_reason="abort"}', 0) > aborted_before,
          "the closed stream is counted as finished_reason=abort")


def waiting_disconnect(server):
    sock = raw_post(server.port, "/v1/chat/completions", {
        "messages": [{"role": "user", "content": PROMPT}], "max_tokens": LONG, "temperature": 0, "ignore_eos": True})
    wait_running(server.port)
    steps = fresh_engine_steps(server)
    sock.close()
    check_freed(server, "non-streaming client hung up while waiting", steps)


def zmq_abort(server):
    zc = ZmqClient(server.zmq_endpoint)
    try:
        zc.submit(9, prompt=PROMPT, max_tokens=LONG, temperature=0.0, ignore_eos=True)
        deltas = 0
        while deltas < 3:
            message_type, payload = zc.recv(120)
            check_equal(message_type, TEXT_DELTA, f"answer to the long request: {payload!r}")
            deltas += 1
        wait_running(server.port)
        steps = fresh_engine_steps(server)
        zc.send(ABORT, {"request_id": 9, "reason": "test"})
        while True:
            message_type, payload = zc.recv(60)
            check_equal(message_type, TEXT_DELTA, f"answer after Abort: {payload!r}")
            if payload.get("finish_reason"):
                check_equal(payload["finish_reason"], "abort", "the last delta's finish_reason after Abort")
                break
        check_freed(server, "ZeroMQ Abort", steps)
        # The id may be reused once the request is over, and the connection still works.
        zc.submit(9, prompt=PROMPT, max_tokens=4, temperature=0.0, ignore_eos=True)
        r = zc.collect([9])[9]
        check_equal((r.get("finish_reason"), len(r.get("token_ids", []))), ("length", 4), "a new request with id 9")
    finally:
        zc.close()


def zmq_disconnect(server):
    zc = ZmqClient(server.zmq_endpoint)
    zc.submit(3, prompt=PROMPT, max_tokens=LONG, temperature=0.0, ignore_eos=True)
    message_type, payload = zc.recv(120)
    check_equal(message_type, TEXT_DELTA, f"answer to the long request: {payload!r}")
    wait_running(server.port)
    steps = fresh_engine_steps(server)
    zc.close()  # the gateway finds out when it can no longer route a delta to us
    check_freed(server, "ZeroMQ client went away", steps)


def body(args):
    with Server(args) as server:
        server.stats_client = ZmqClient(server.zmq_endpoint)
        streaming_disconnect(server)
        waiting_disconnect(server)
        zmq_abort(server)
        zmq_disconnect(server)
        status, body = post_json(server.port, "/v1/completions", {"prompt": PROMPT, "max_tokens": 5, "temperature": 0,
                                                                  "ignore_eos": True})
        check_equal((status, body.get("usage", {}).get("completion_tokens")), (200, 5), "a request afterwards")
        check(server.alive(), "the server is still running")
        server.stats_client.close()


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
