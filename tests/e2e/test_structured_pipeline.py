"""e2e: structured output through the pipeline (Invariant 37 of docs/architecture.md) on the
random-weight default model, over the ZeroMQ client protocol (GenerateRequest with
sampling.structured, protocol 1.6): JSON Schema, regex, choice and GBNF requests with n = 4 and
sampling at temperature 1. Every sample must end with "stop" (the grammar lets EOS through only
where the output is complete) and its text must validate: JSON Schemas with python3-jsonschema
(not our grammar), regexes and choices with re.fullmatch. Then the same under memory pressure
(a small KV pool: sequences are preempted and recomputed; prefix caching on), and a source that
does not compile fails its request alone."""

import json
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jsonschema  # noqa: E402  (Debian's python3-jsonschema)
import msgpack  # noqa: E402
from e2e_common import (ERROR_REPLY, GENERATE_REQUEST, TEXT_DELTA, Server, ZmqClient, check,  # noqa: E402
                        check_equal, log, main_wrapper, metric, parse_args, wait_idle)

N = 4
JSON_SCHEMA, JSON_OBJECT, REGEX, CHOICE, GRAMMAR = 0, 1, 2, 3, 4

# Schemas whose documents are bounded (maxLength, enums, integer bounds, maxItems): a model of
# random weights ends them within max_tokens because the grammar closes them.
SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                      "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"]},
    {"type": "object", "properties": {
        "status": {"enum": ["active", "inactive", "pending"]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 6}, "minItems": 1, "maxItems": 3},
        "score": {"type": "integer", "minimum": -50, "maximum": 50},
        "ok": {"type": "boolean"}},
     "required": ["status", "tags", "ok"]},
    {"type": "object", "properties": {
        "point": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9},
                                                   "y": {"type": "integer", "minimum": 0, "maximum": 9}},
                  "required": ["x", "y"]},
        "label": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 8}]},
        "kind": {"const": "marker"}},
     "required": ["point", "kind"]},
    {"$defs": {"item": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1, "maximum": 999},
                                                          "unit": {"enum": ["kg", "g"]}},
                        "required": ["id", "unit"]}},
     "type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 2},
]
REGEXES = [r"[a-z]{3,8}@[a-z]{2,5}\.(com|org)", r"\d{3}-\d{4}", r"(yes|no|maybe)!?", r"[A-F0-9]{4}( [A-F0-9]{4}){0,2}"]
CHOICES = [["red", "green", "blue"], ["The answer is 42", "I do not know"]]
GRAMMARS = [
    # (GBNF, a Python regex of the same language)
    ('root ::= "answer: " ("yes" | "no") ("!" | ".")', r"answer: (yes|no)[!.]"),
    ('root ::= "(" num (" + " num)? ")"\nnum ::= [0-9] [0-9]?', r"\([0-9][0-9]?( \+ [0-9][0-9]?)?\)"),
]


def cases():
    """(kind, text, choices, validator(text) -> error or None, max_tokens)"""
    out = []
    for schema in SCHEMAS:
        def validate(text, schema=schema):
            try:
                jsonschema.validate(json.loads(text), schema)
            except (ValueError, jsonschema.ValidationError) as e:
                return f"{type(e).__name__}: {str(e)[:200]}"
            return None
        # JSON allows up to 25 bytes of whitespace at each structural character, which a model
        # of random weights takes often: room for it.
        out.append((JSON_SCHEMA, json.dumps(schema), [], validate, 400))
    for pattern in REGEXES:
        out.append((REGEX, pattern, [], lambda t, p=pattern: None if re.fullmatch(p, t) else "no full match", 64))
    for choices in CHOICES:
        out.append((CHOICE, "", choices, lambda t, c=choices: None if t in c else "not a choice", 32))
    for gbnf, pattern in GRAMMARS:
        out.append((GRAMMAR, gbnf, [], lambda t, p=pattern: None if re.fullmatch(p, t) else "no full match", 32))
    return out


class Client(ZmqClient):
    """Protocol 1.6 envelopes, and results per sample (n > 1)."""

    def submit16(self, request_id, prompt, **sampling):
        payload = {"request_id": request_id, "model": "", "prompt": prompt, "sampling": sampling}
        self.sock.send(msgpack.packb([1, 6, GENERATE_REQUEST, payload], use_bin_type=True))

    def collect_samples(self, n_of, timeout_s=600):
        """n_of: {request id: n}. Returns {rid: {"samples": {index: {text, finish_reason, tokens}},
        "error": ErrorReply payload or None}}; a request is over when each sample has finished
        (not with "error") or an ErrorReply came."""
        results = {rid: {"samples": {i: {"text": "", "finish_reason": "", "tokens": 0} for i in range(n)},
                         "error": None} for rid, n in n_of.items()}
        pending = set(n_of)
        deadline = time.monotonic() + timeout_s
        while pending:
            message_type, payload = self.recv(max(0.1, deadline - time.monotonic()))
            rid = payload.get("request_id")
            if rid not in pending:
                continue
            r = results[rid]
            if message_type == ERROR_REPLY:
                r["error"] = payload
                pending.discard(rid)
                continue
            check_equal(message_type, TEXT_DELTA, f"message type for request {rid}")
            s = r["samples"][payload.get("index", 0)]
            s["text"] += payload.get("text", "")
            s["tokens"] += len(payload.get("token_ids", []))
            if payload.get("finish_reason"):
                s["finish_reason"] = payload["finish_reason"]
            if all(x["finish_reason"] and x["finish_reason"] != "error" for x in r["samples"].values()):
                pending.discard(rid)
        return results


def prompt_of(i):
    return (f"Request {i}: write the answer in the requested format. The harbour had {i * 7} boats, "
            f"the hills were green and the river ran to the sea.")


def run_cases(server, rounds, first_id):
    """Every case `rounds` times at once, n = 4; checks each sample. Returns the count."""
    client = Client(server.zmq_endpoint)
    try:
        all_cases = cases()
        submitted = {}
        rid = first_id
        for round_ in range(rounds):
            for k, (kind, text, choices, validate, max_tokens) in enumerate(all_cases):
                structured = {"kind": kind, "text": text, "choices": choices, "begin_after": ""}
                client.submit16(rid, prompt_of(rid), max_tokens=max_tokens, temperature=1.0, seed=rid, n=N,
                                structured=structured)
                submitted[rid] = (kind, text, choices, validate)
                rid += 1
        results = client.collect_samples({r: N for r in submitted})
        checked = 0
        for r, (kind, text, choices, validate) in submitted.items():
            res = results[r]
            check(res["error"] is None, f"request {r} ({kind}, {text or choices!r}) failed: {res['error']!r}")
            for index, s in res["samples"].items():
                what = f"request {r} sample {index} (kind {kind}, {(text or repr(choices))[:80]}): {s['text']!r}"
                check_equal(s["finish_reason"], "stop", what)
                problem = validate(s["text"])
                check(problem is None, f"{what}: {problem}")
                checked += 1
        return checked
    finally:
        client.close()


def check_bad_source_fails_alone(server):
    client = Client(server.zmq_endpoint)
    try:
        client.submit16(900, prompt_of(900), max_tokens=16, temperature=1.0, n=2,
                        structured={"kind": REGEX, "text": "(unclosed", "choices": [], "begin_after": ""})
        client.submit16(901, prompt_of(901), max_tokens=16, temperature=1.0, n=2,
                        structured={"kind": CHOICE, "text": "", "choices": ["fine"], "begin_after": ""})
        results = client.collect_samples({900: 2, 901: 2}, timeout_s=120)
        err = results[900]["error"]
        check(err is not None, f"a regex that does not compile was accepted: {results[900]!r}")
        check_equal(err.get("code"), 400, f"error code: {err!r}")
        log(f"bad regex: {err.get('message')!r}")
        check(results[901]["error"] is None, f"the other request failed: {results[901]!r}")
        for s in results[901]["samples"].values():
            check_equal((s["text"], s["finish_reason"]), ("fine", "stop"), "the other request's samples")
    finally:
        client.close()


def main(args):
    t0 = time.monotonic()
    with Server(args) as server:
        checked = run_cases(server, rounds=1, first_id=1)
        log(f"{checked} samples valid in {time.monotonic() - t0:.1f} s")
        check_bad_source_fails_alone(server)
        wait_idle(server.port)
    # A pool of 40 blocks of 16 tokens for 2 rounds of requests at once: sequences are preempted
    # and recomputed (their matchers keep their place: the executor saw every token), and prompts
    # share cached prefix blocks.
    t1 = time.monotonic()
    with Server(args, scheduler={"preemption": "recompute"},
                cache={"block_size": 16, "num_gpu_blocks": 40, "enable_prefix_caching": True}) as server:
        checked = run_cases(server, rounds=2, first_id=1000)
        m = wait_idle(server.port)
        preemptions = metric(m, "zinfer_num_preemptions_total")
        log(f"{checked} samples valid under memory pressure in {time.monotonic() - t1:.1f} s, "
            f"{preemptions} preemptions")
        check(preemptions > 0, "the small pool preempted nothing: the recompute path was not taken")


if __name__ == "__main__":
    args = parse_args(__doc__)
    main_wrapper(lambda: main(args), args.timeout)
