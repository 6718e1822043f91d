"""e2e: the scheduling policies in the real server, and the request fields they read.

One sequence at a time ([scheduler] max_num_seqs = 1): a long request L runs, and two requests A
and B queue behind it (A first). Which of them runs next shows that the policy was found by name
in the built binary and that the field it orders by travelled from the client to the scheduler:
  fcfs: A (it came first);
  sjf:  B, whose predicted_output_tokens (2) is far below A's (64), although both may make 64;
  fair: B, of tenant "b", never served, while tenant "a" (L and A) was served all of L.
Over ZeroMQ (GenerateRequest.tenant / predicted_output_tokens) and HTTP (`user` and
`predicted_output_tokens`); a bad predicted_output_tokens is refused on both, naming the field."""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (ERROR_REPLY, GENERATE_REQUEST, TEXT_DELTA, Server, ZmqClient, check,  # noqa: E402
                        check_equal, check_openai_error, log, main_wrapper, parse_args, post_json)

LONG_TOKENS = 400  # L: long enough that A and B reach the scheduler while it runs
SHORT_TOKENS = 64


def request(request_id, prompt, max_tokens, tenant="", predicted=0):
    return {"request_id": request_id, "prompt": prompt, "tenant": tenant, "predicted_output_tokens": predicted,
            "sampling": {"max_tokens": max_tokens, "temperature": 0, "ignore_eos": True}}


def order_after_long_request(server):
    """Sends L, waits for its first token, sends A then B; returns the ids of A and B in the order
    they produced their first token."""
    zc = ZmqClient(server.zmq_endpoint)
    try:
        zc.send(GENERATE_REQUEST, request(1, "The long request keeps the only slot busy", LONG_TOKENS, tenant="a"))
        message_type, payload = zc.recv()
        check_equal(message_type, TEXT_DELTA, f"L's first answer ({payload!r})")
        zc.send(GENERATE_REQUEST, request(2, "Request A asks first", SHORT_TOKENS, tenant="a", predicted=SHORT_TOKENS))
        zc.send(GENERATE_REQUEST, request(3, "Request B asks second", SHORT_TOKENS, tenant="b", predicted=2))
        first_token_order, finished = [], set()
        while len(finished) < 3:
            message_type, payload = zc.recv()
            check(message_type != ERROR_REPLY, f"error reply: {payload!r}")
            rid = payload["request_id"]
            if rid != 1 and rid not in first_token_order:
                check(1 in finished, f"request {rid} ran before L finished: more than one slot?")
                first_token_order.append(rid)
            if payload.get("finish_reason"):
                check_equal(payload["finish_reason"], "length", f"request {rid}'s finish_reason")
                finished.add(rid)
        return first_token_order
    finally:
        zc.close()


def check_refusals(server):
    status, body = post_json(server.port, "/v1/completions", {"prompt": "x", "max_tokens": 1,
                                                             "predicted_output_tokens": 0})
    check_openai_error(status, body, 400, "predicted_output_tokens 0")
    check_equal(body["error"]["param"], "predicted_output_tokens", "the refused parameter")
    status, body = post_json(server.port, "/v1/completions", {"prompt": "x", "max_tokens": 1, "user": 5})
    check_openai_error(status, body, 400, "user 5")
    check_equal(body["error"]["param"], "user", "the refused parameter")
    status, body = post_json(server.port, "/v1/completions", {"prompt": "x", "max_tokens": 2, "user": "someone",
                                                             "predicted_output_tokens": 2})
    check_equal(status, 200, f"a request with user and predicted_output_tokens: {body!r}")
    zc = ZmqClient(server.zmq_endpoint)
    try:
        zc.send(GENERATE_REQUEST, request(9, "x", 1, predicted=-1))
        message_type, payload = zc.recv()
        check_equal(message_type, ERROR_REPLY, "answer to a negative predicted_output_tokens")
        check_equal(payload["code"], 400, "its code")
        check("predicted_output_tokens" in payload["message"], f"the message names the field: {payload!r}")
    finally:
        zc.close()


def body(args):
    expected = {"fcfs": [2, 3], "sjf": [3, 2], "fair": [3, 2]}
    for policy, order in expected.items():
        with Server(args, scheduler={"policy": policy, "max_num_seqs": 1}) as server:
            got = order_after_long_request(server)
            check_equal(got, order, f"{policy}: the order in which A (2) and B (3) ran after L")
            log(f"{policy}: {' then '.join('AB'[rid - 2] for rid in got)} after L")
            if policy == "fair":
                check_refusals(server)
                log("bad predicted_output_tokens and user refused over HTTP and ZeroMQ")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
