"""e2e 6: bad input gets its error status and OpenAI's error JSON (HTTP) or an ErrorReply (ZeroMQ):
malformed JSON, wrong types, an unknown model (404), a prompt over the context length, max_tokens
<= 0, broken msgpack frames; meanwhile concurrent good requests complete unaffected, with output
identical to the same requests on an idle server."""

# Invariant 25 (docs/architecture.md): no input aborts a process.

import json
import os
import sys
import threading

import msgpack

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (ERROR_REPLY, GENERATE_REQUEST, Server, ZmqClient, check, check_equal,  # noqa: E402
                        check_openai_error, http_request, log, main_wrapper, parse_args, stream_request,
                        wait_idle, zmq_encode)

MAX_MODEL_LEN = 256
MAX_BODY_BYTES = 65536
GOOD_TOKENS = 48
NUM_GOOD = 6


def good_body(i):
    return {"prompt": f"Good request {i}: write about the sea and the {i} ships", "max_tokens": GOOD_TOKENS,
            "temperature": 0, "ignore_eos": True, "stream": True, "return_token_ids": True}


def run_good(port, i, results):
    try:
        events = stream_request(port, "/v1/completions", good_body(i), timeout=600)
        results[i] = [t for e in events for c in e["choices"] for t in c["token_ids"]]
    except Exception as e:  # noqa: BLE001 - reported by the main thread
        results[i] = e


def long_text(words):
    return " ".join(f"word{i}" for i in range(words))


def http_bad_requests(server):
    """(description, path, raw body, expected status) of requests that must be refused."""
    p = "/v1/completions"
    c = "/v1/chat/completions"
    cases = [
        ("malformed JSON", p, '{"prompt": "hi", "max_tokens": ', 400),
        ("JSON that is not an object", p, '["prompt", "hi"]', 400),
        ("prompt of the wrong type", p, {"prompt": 42, "max_tokens": 4}, 400),
        ("max_tokens a string", p, {"prompt": "hi", "max_tokens": "ten"}, 400),
        ("temperature a string", p, {"prompt": "hi", "temperature": "hot"}, 400),
        ("stream not a bool", p, {"prompt": "hi", "stream": "yes"}, 400),
        ("messages not a list", c, {"messages": "hello"}, 400),
        ("message content of the wrong type", c, {"messages": [{"role": "user", "content": 7}]}, 400),
        ("no prompt", p, {"max_tokens": 4}, 400),
        ("unknown model", p, {"model": "no-such-model", "prompt": "hi"}, 404),
        ("unknown model (chat)", c, {"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]}, 404),
        ("max_tokens 0", p, {"prompt": "hi", "max_tokens": 0}, 400),
        ("max_tokens -1", p, {"prompt": "hi", "max_tokens": -1}, 400),
        ("max_tokens 0 (chat)", c, {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}, 400),
        ("text prompt over the context length", p, {"prompt": long_text(2 * MAX_MODEL_LEN), "max_tokens": 4}, 400),
        ("token-id prompt over the context length", p, {"prompt": [100] * (MAX_MODEL_LEN + 10), "max_tokens": 4}, 400),
        ("prompt + max_tokens over the context length", p,
         {"prompt": [100] * (MAX_MODEL_LEN // 2), "max_tokens": MAX_MODEL_LEN}, 400),
        ("chat prompt over the context length", c,
         {"messages": [{"role": "user", "content": long_text(2 * MAX_MODEL_LEN)}], "max_tokens": 4}, 400),
        ("streamed prompt over the context length", p,
         {"prompt": long_text(2 * MAX_MODEL_LEN), "max_tokens": 4, "stream": True}, 400),
    ]
    for what, path, body, expected in cases:
        status, _, data = http_request(server.port, "POST", path, body,
                                       headers={"Content-Type": "application/json"})
        try:
            decoded = json.loads(data)
        except ValueError:
            decoded = data
        check_openai_error(status, decoded, expected, what)
        log(f"{what}: {status} {decoded['error']['message'][:100]!r}")
    big = json.dumps({"prompt": "x" * (MAX_BODY_BYTES + 1000), "max_tokens": 4})
    status, _, data = http_request(server.port, "POST", p, big, headers={"Content-Type": "application/json"})
    check_openai_error(status, json.loads(data), 413, "a body over max_body_bytes")
    log(f"a body over max_body_bytes: {status}")
    status, _, data = http_request(server.port, "GET", "/v1/no-such-path")
    check_equal(status, 404, "an unknown path")
    status, _, data = http_request(server.port, "GET", "/v1/completions")
    check_equal(status, 405, "GET on /v1/completions")


def zmq_bad_frames(server):
    zc = ZmqClient(server.zmq_endpoint)
    try:
        def expect_error(what, code, kind_prefix, request_id):
            message_type, reply = zc.recv(60)
            check_equal(message_type, ERROR_REPLY, f"{what}: reply type ({reply!r})")
            check_equal(reply.get("code"), code, f"{what}: ErrorReply code ({reply!r})")
            check(str(reply.get("kind", "")).startswith(kind_prefix), f"{what}: ErrorReply kind {reply!r}")
            check_equal(reply.get("request_id"), request_id, f"{what}: ErrorReply request_id")
            check(reply.get("message"), f"{what}: ErrorReply without a message")
            log(f"ZeroMQ {what}: {code} {reply['kind']}")

        zc.send_raw(b"\xc1 garbage")
        expect_error("not msgpack", 400, "bad_frame:malformed", 0)
        zc.send_raw(zmq_encode(GENERATE_REQUEST, {"request_id": 1})[:-3])
        expect_error("a truncated frame", 400, "bad_frame", 0)
        zc.send_raw(b"\x93\x01\x00\x0a")  # a 3-element array
        expect_error("a 3-element envelope", 400, "bad_frame", 0)
        zc.send_raw(zmq_encode(GENERATE_REQUEST, {"request_id": 2, "prompt": "hi"}), b"second frame")
        expect_error("a 2-frame message", 400, "bad_frame", 0)
        zc.send_raw(msgpack.packb([9, 0, GENERATE_REQUEST, {"request_id": 3, "prompt": "hi"}]))
        expect_error("a newer major version", 400, "bad_frame:newer_version", 0)
        zc.send_raw(zmq_encode(200, {}))
        expect_error("an unknown message type", 400, "bad_frame", 0)
        zc.submit(4, prompt="hi", max_tokens=0)
        expect_error("max_tokens 0", 400, "invalid_request", 4)
        zc.submit(5, prompt="hi", model="no-such-model", max_tokens=4)
        expect_error("an unknown model", 404, "", 5)
        zc.submit(6, prompt=long_text(2 * MAX_MODEL_LEN), max_tokens=4)
        expect_error("a prompt over the context length", 400, "", 6)
        zc.send(GENERATE_REQUEST, {"request_id": 7, "prompt": "hi", "sampling": {"max_tokens": "four"}})
        expect_error("max_tokens a string", 400, "bad_frame", 0)  # the payload did not decode
        # The connection still serves good requests.
        zc.submit(8, prompt="still working?", max_tokens=4, temperature=0.0, ignore_eos=True)
        r = zc.collect([8])[8]
        check_equal((r.get("finish_reason"), len(r.get("token_ids", []))), ("length", 4),
                    f"a good ZeroMQ request after the bad ones: {r!r}")
    finally:
        zc.close()


def body(args):
    with Server(args, model={"max_model_len": MAX_MODEL_LEN}, server={"max_body_bytes": MAX_BODY_BYTES}) as server:
        # References on the idle server.
        reference = {}
        for i in range(NUM_GOOD):
            run_good(server.port, i, reference)
            check(not isinstance(reference[i], Exception), f"reference {i}: {reference[i]}")

        results = {}
        threads = [threading.Thread(target=run_good, args=(server.port, i, results), daemon=True)
                   for i in range(NUM_GOOD)]
        for t in threads:
            t.start()
        http_bad_requests(server)
        zmq_bad_frames(server)
        for t in threads:
            t.join(timeout=600)
        check(not any(t.is_alive() for t in threads), "good requests did not finish within 600 s")
        for i in range(NUM_GOOD):
            check(not isinstance(results[i], Exception), f"good request {i} failed: {results[i]}")
            check_equal(len(results[i]), GOOD_TOKENS, f"good request {i}: tokens")
            check_equal(results[i], reference[i], f"good request {i}: tokens vs the same request on an idle server")
        log(f"{NUM_GOOD} concurrent good requests completed unaffected")
        wait_idle(server.port)
        check(server.alive(), "the server is still running")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
