"""e2e (issue 19): structured output together with the server's other features, on the
random-weight default model over HTTP. One case per run (--case):

- stop: stop strings with a grammar (response_format json_schema, structured_outputs regex and
  choice). Where the stop string appears the output ends before it (finish_reason "stop",
  stop_reason the string) and is the grammar's prefix: the JSON text completed by hand after the
  stop validates with python3-jsonschema, the regex's prefix fully matches the part before the
  separator. include_stop_str_in_output keeps the string. A stop string the grammar cannot produce
  leaves a whole valid document (stop_reason null: it ended at end-of-sequence). Chat and
  completions, stream and not, n = 2.
- swap: a KV pool far too small for 12 concurrent json_schema requests with n = 4 and
  preemption = "swap": every sample validates, /metrics showed requests swapped out while the load
  ran (the test fails if none was), and every device and host block is free afterwards.
- tools_reasoning: forced tool calls (tool_choice "required" and a named function) with
  --reasoning-parser qwen3 and the Qwen3 template (hermes format): the calls parse, their
  arguments validate against the tool's schema; with thinking on, reasoning_content is the text
  before </think> (null where it is empty), with enable_thinking false or include_reasoning false
  it is null; the stream's deltas put together equal the whole answer for the same seed, reasoning
  deltas before the calls.
- prefix_cache: prefix caching on; the same json_schema prompt twice: the second is served from
  the cache (cached_tokens and zinfer_prefix_cache_hit_rate > 0), both outputs validate and, with
  the same seed, are the same; a streamed third also hits the cache and validates."""

import argparse
import concurrent.futures
import json
import os
import re
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, ZmqClient, check, check_equal, log, main_wrapper, metric, metrics,  # noqa: E402
                        parse_args, post_json, stream_request, wait_idle)
from structured_common import THINK_END, eos_bias, json_bias, validate  # noqa: E402


# ---- requests ------------------------------------------------------------------------------------

def body_of(i, chat, extra):
    body = {"max_tokens": 200, "temperature": 1.0, "seed": 100 + i}
    if chat:
        body["messages"] = [{"role": "user", "content": f"Answer in the requested format ({i})."}]
    else:
        body["prompt"] = f"Answer {i}:"
    body.update(extra)
    return body


def answer(port, body, chat, stream):
    """One request, stream or not; returns (choices sorted by index, usage or None). A choice is
    {"text", "finish_reason", "stop_reason", "reasoning", "tool_calls", "order"}: a stream's deltas
    put together, `order` the kinds of its deltas ("reasoning", "content", "tool_calls")."""
    path = "/v1/chat/completions" if chat else "/v1/completions"
    if not stream:
        status, out = post_json(port, path, body)
        check_equal(status, 200, f"status of {json.dumps(body)[:300]} (answer {out!r})")
        choices = []
        for c in out["choices"]:
            message = c.get("message", {})
            choices.append({"index": c["index"], "text": message.get("content") if chat else c["text"],
                            "finish_reason": c["finish_reason"], "stop_reason": c.get("stop_reason"),
                            "reasoning": message.get("reasoning_content"), "tool_calls": message.get("tool_calls"),
                            "order": []})
        return sorted(choices, key=lambda c: c["index"]), out.get("usage")
    acc, usage = {}, None
    for event in stream_request(port, path, dict(body, stream=True)):
        usage = event.get("usage") or usage  # stream_options.include_usage: the last chunk's
        for c in event["choices"]:
            a = acc.setdefault(c["index"], {"index": c["index"], "text": None, "finish_reason": None,
                                            "stop_reason": None, "reasoning": None, "tool_calls": None,
                                            "order": []})
            delta = c.get("delta", {}) if chat else {"content": c.get("text")}
            if delta.get("reasoning_content"):
                a["reasoning"] = (a["reasoning"] or "") + delta["reasoning_content"]
                a["order"].append("reasoning")
            if delta.get("content"):
                a["text"] = (a["text"] or "") + delta["content"]
                a["order"].append("content")
            for t in delta.get("tool_calls") or []:
                a["order"].append("tool_calls")
                calls = a["tool_calls"] = a["tool_calls"] or []
                if "id" in t:
                    check_equal(t["index"], len(calls), "a call's first delta has the next index")
                    calls.append({"id": t["id"], "type": t["type"],
                                  "function": {"name": t["function"]["name"],
                                               "arguments": t["function"].get("arguments", "")}})
                else:
                    check(t["index"] < len(calls), f"arguments for call {t['index']} before its first delta")
                    calls[t["index"]]["function"]["arguments"] += t["function"]["arguments"]
            if c.get("finish_reason"):
                a["finish_reason"] = c["finish_reason"]
                a["stop_reason"] = c.get("stop_reason")
    if not chat:  # a completion's text is "" rather than null
        for a in acc.values():
            a["text"] = a["text"] or ""
    return sorted(acc.values(), key=lambda c: c["index"]), usage


MODES = [(chat, stream) for chat in (True, False) for stream in (False, True)]


def mode_name(chat, stream):
    return f"{'chat' if chat else 'completion'}, {'stream' if stream else 'whole'}"


# ---- stop strings with a grammar -----------------------------------------------------------------

# The keys come in the schema's order; "name" only holds lower-case letters, so neither a quote
# nor an upper-case letter can appear in a value.
STOP_SCHEMA = {"type": "object",
               "properties": {"name": {"type": "string", "pattern": "^[a-z]{1,8}$"},
                              "age": {"type": "integer", "minimum": 0, "maximum": 120},
                              "tag": {"enum": ["x", "y"]}},
               "required": ["name", "age", "tag"], "additionalProperties": False}
STOP_FORMAT = {"response_format": {"type": "json_schema",
                                   "json_schema": {"name": "person", "schema": STOP_SCHEMA, "strict": True}}}
STOP_REGEX = r"[a-z]{2,6}-\d{3}-(ok|no)"
STOP_CHOICES = ["alpha beta", "gamma delta"]

# (name, request fields, the stop string that must end every sample or None, check(text) -> problem)
def _json_completed(suffix):
    def problem(text):
        try:
            validate(STOP_SCHEMA, text + suffix, "")
        except AssertionError as e:
            return f"not the schema's prefix: completed with {suffix!r} it does not validate ({e})"
        return None
    return problem


def _json_whole(text):
    try:
        validate(STOP_SCHEMA, text, "")
    except AssertionError as e:
        return str(e)
    return None


STOP_CASES = [
    # A whole key: the output is "{", the name and its value, and "," (with whitespace).
    ("json_schema, stop at a key", dict(STOP_FORMAT, stop=['"age"']), '"age"', _json_completed('"age": 0, "tag": "x"}')),
    # A stop string inside the tokens '":' or ':"': the output ends after the first key.
    ("json_schema, stop at the first ':'", dict(STOP_FORMAT, stop=[":"]), ":",
     _json_completed(': "a", "age": 7, "tag": "y"}')),
    ("json_schema, stop kept in the output", dict(STOP_FORMAT, stop=['"age"'], include_stop_str_in_output=True), '"age"',
     lambda t: "the stop string is not at the end" if not t.endswith('"age"') else _json_completed(': 1, "tag": "x"}')(t)),
    ("regex, stop at the separator", {"structured_outputs": {"regex": STOP_REGEX}, "stop": ["-"]}, "-",
     lambda t: None if re.fullmatch(r"[a-z]{2,6}", t) else "not the part of the regex before its first '-'"),
    ("choice, stop at the space", {"structured_outputs": {"choice": STOP_CHOICES}, "stop": [" "]}, " ",
     lambda t: None if t in ("alpha", "gamma") else "not the first word of a choice"),
    # Upper case cannot appear in the document: the stop never matches and the document is whole.
    ("json_schema, a stop string that cannot appear", dict(STOP_FORMAT, stop=["NEVER", "Z"]), None, _json_whole),
    ("regex, a stop string that cannot appear", {"guided_regex": STOP_REGEX, "stop": ["+"]}, None,
     lambda t: None if re.fullmatch(STOP_REGEX, t) else "no full match of the regex"),
]


def case_stop(args):
    with Server(args) as server:
        jbias, ebias = json_bias(args.model), eos_bias()
        jobs = []
        for k, (name, fields, stop, problem_of) in enumerate(STOP_CASES):
            bias = ebias if "regex" in name else jbias
            for m, (chat, stream) in enumerate(MODES):
                jobs.append((name, stop, problem_of, chat, stream,
                             body_of(10 * k + m, chat, dict(fields, n=2, logit_bias=bias))))

        def one(job):
            name, stop, problem_of, chat, stream, body = job
            choices, _ = answer(server.port, body, chat, stream)
            check_equal(len(choices), 2, f"{name} ({mode_name(chat, stream)}): choices")
            for c in choices:
                what = f"{name} ({mode_name(chat, stream)}) sample {c['index']}: output {c['text']!r}"
                check_equal(c["finish_reason"], "stop", f"{what}: finish_reason")
                check_equal(c["stop_reason"], stop, f"{what}: stop_reason")
                if stop is not None and not body.get("include_stop_str_in_output"):
                    check(stop not in c["text"], f"{what}: the stop string is in the output")
                problem = problem_of(c["text"])
                check(problem is None, f"{what}: {problem}")
            return name

        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            for _ in pool.map(one, jobs):
                pass
        log(f"{len(STOP_CASES)} stop cases x {len(MODES)} modes x n=2: each output ended at its stop string as "
            f"the grammar's prefix, or whole where the stop cannot appear ({time.monotonic() - t0:.1f} s)")
        wait_idle(server.port)


# ---- swap preemption with grammars ---------------------------------------------------------------

SWAP_SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10},
                                      "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"], "additionalProperties": False},
    {"type": "object", "properties": {
        "status": {"enum": ["active", "inactive", "pending"]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "minItems": 1, "maxItems": 3},
        "ok": {"type": "boolean"}},
     "required": ["status", "tags", "ok"]},
    {"$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 99},
                                                           "y": {"type": "integer", "minimum": 0, "maximum": 99}},
                         "required": ["x", "y"], "additionalProperties": False}},
     "type": "object", "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"},
                                      "label": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 6}]}},
     "required": ["from", "to", "label"]},
]
SWAP_REQUESTS = 12
SWAP_N = 4
SWAP_BLOCK_SIZE = 16
# A request's prompt (~40 tokens with the template) and its 200 tokens need 16 blocks; 12 x 4
# samples of ~60 tokens each want ~200 at once.
SWAP_GPU_BLOCKS = 24
SWAP_CPU_BLOCKS = 512


def case_swap(args):
    with Server(args, scheduler={"preemption": "swap"},
                cache={"block_size": SWAP_BLOCK_SIZE, "num_gpu_blocks": SWAP_GPU_BLOCKS,
                       "num_cpu_blocks": SWAP_CPU_BLOCKS}) as server:
        bias = json_bias(args.model)
        results = {}

        def one(i):
            schema = SWAP_SCHEMAS[i % len(SWAP_SCHEMAS)]
            chat, stream = MODES[i % len(MODES)]
            field = ({"response_format": {"type": "json_schema", "json_schema": {"name": f"s{i}", "schema": schema}}}
                     if chat else {"structured_outputs": {"json": schema}})
            body = body_of(i, chat, dict(field, n=SWAP_N, logit_bias=bias))
            try:
                choices, _ = answer(server.port, body, chat, stream)
                check_equal(len(choices), SWAP_N, f"request {i}: choices")
                for c in choices:
                    what = f"request {i} ({mode_name(chat, stream)}) sample {c['index']}"
                    check_equal(c["finish_reason"], "stop", f"{what}: finish_reason (output {c['text']!r})")
                    validate(schema, c["text"], what)
                results[i] = None
            except Exception as e:  # noqa: BLE001 - reported below
                results[i] = e

        t0 = time.monotonic()
        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(SWAP_REQUESTS)]
        for t in threads:
            t.start()
        # The swapped gauge, watched while the load runs: the proof that the swap path was taken.
        most_swapped = 0
        while any(t.is_alive() for t in threads):
            most_swapped = max(most_swapped, metrics(server.port).get("zinfer_num_requests_swapped", 0))
            time.sleep(0.02)
        failures = {i: r for i, r in results.items() if r is not None}
        check(not failures, f"failed requests: {failures}")
        check_equal(len(results), SWAP_REQUESTS, "requests answered")
        m = wait_idle(server.port)
        preemptions = metric(m, "zinfer_num_preemptions_total")
        check(most_swapped > 0, f"no request was seen swapped out (zinfer_num_requests_swapped) with "
                                f"{SWAP_GPU_BLOCKS} blocks; {preemptions:.0f} preemptions")
        zc = ZmqClient(server.zmq_endpoint)
        try:
            stats = zc.stats()
        finally:
            zc.close()
        check_equal(stats["free_cpu_blocks"], SWAP_CPU_BLOCKS, "Stats.free_cpu_blocks after the load")
        check_equal(stats["free_gpu_blocks"], stats["num_gpu_blocks"], "Stats.free_gpu_blocks after the load")
        log(f"swap: {SWAP_REQUESTS} json_schema requests x n={SWAP_N} valid with {SWAP_GPU_BLOCKS} blocks, "
            f"{preemptions:.0f} preemptions, up to {most_swapped:.0f} sequences swapped out at once, every block "
            f"free afterwards ({time.monotonic() - t0:.1f} s)")


# ---- forced tool calls with a reasoning parser ---------------------------------------------------

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city.",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 8},
                                      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                       "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "search_docs", "description": "Search the manual.",
        "parameters": {"type": "object",
                       "properties": {"query": {"type": "string", "maxLength": 6},
                                      "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                                      "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}},
                       "required": ["query", "limit"], "additionalProperties": False}}},
]
TOOL_SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
TOOL_N = 2


def check_calls(choice, what, named):
    check_equal(choice["finish_reason"], "tool_calls", f"{what}: finish_reason ({choice!r})")
    check(choice["text"] is None, f"{what}: content {choice['text']!r} beside forced calls")
    calls = choice["tool_calls"]
    check(isinstance(calls, list) and calls, f"{what}: no tool_calls ({choice!r})")
    if named:
        check_equal([c["function"]["name"] for c in calls], [named], f"{what}: the named function, once")
    for c in calls:
        check(c["id"].startswith("call_"), f"{what}: call id {c['id']!r}")
        check_equal(c["type"], "function", f"{what}: call type")
        name = c["function"]["name"]
        check(name in TOOL_SCHEMAS, f"{what}: unknown function {name!r}")
        validate(TOOL_SCHEMAS[name], c["function"]["arguments"], f"{what}: {name}'s arguments")


def check_reasoning(choice, what, thinking):
    r = choice["reasoning"]
    if not thinking:
        check(r is None, f"{what}: reasoning_content {r!r} without a reasoning part")
        return False
    # The qwen3 parser: everything before </think> (null where that is empty), no tags, no calls.
    check(r is None or (isinstance(r, str) and r), f"{what}: reasoning_content {r!r}")
    for tag in ("<think>", "</think>", "<tool_call>"):
        check(tag not in (r or ""), f"{what}: {tag} in reasoning_content {r!r}")
    return r is not None


def comparable(choice):
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in choice["tool_calls"] or []]
    return choice["finish_reason"], choice["reasoning"], choice["text"], calls


def case_tools_reasoning(args):
    with Server(args, server={"reasoning_parser": "qwen3", "tool_call_parser": "hermes",
                              "enable_auto_tool_choice": True}) as server:
        # </think> biased so that a reasoning part of a few tokens ends, then the call's grammar.
        bias = dict(json_bias(args.model), **{str(THINK_END): 9})
        with_reasoning = 0
        t0 = time.monotonic()
        seed = 0
        for choice_field, named in (("required", None),
                                    ({"type": "function", "function": {"name": "search_docs"}}, "search_docs"),
                                    ({"type": "function", "function": {"name": "get_weather"}}, "get_weather")):
            for thinking, include in ((True, True), (False, True), (True, False)):
                seed += 1
                extra = {"tools": TOOLS, "tool_choice": choice_field, "n": TOOL_N, "max_tokens": 300,
                         "logit_bias": bias, "seed": seed}
                if not thinking:
                    extra["chat_template_kwargs"] = {"enable_thinking": False}
                if not include:
                    extra["include_reasoning"] = False
                body = body_of(seed, True, extra)
                whole, _ = answer(server.port, body, True, False)
                streamed, _ = answer(server.port, body, True, True)
                label = f"tool_choice {named or choice_field}, thinking {'on' if thinking else 'off'}" + \
                        ("" if include else ", include_reasoning false")
                check_equal(len(whole), TOOL_N, f"{label}: choices")
                for c, s in zip(whole, streamed):
                    what = f"{label}, sample {c['index']}"
                    check_calls(c, what, named)
                    check_calls(s, what + " (stream)", named)
                    has = check_reasoning(c, what, thinking and include)
                    check_reasoning(s, what + " (stream)", thinking and include)
                    with_reasoning += has
                    check_equal(comparable(s), comparable(c), f"{what}: the stream put together vs the whole answer")
                    order = s["order"]
                    check(order == sorted(order, key=lambda k: k != "reasoning"),
                          f"{what} (stream): reasoning deltas after the calls: {order}")
                log(f"{label}: {TOOL_N} samples with valid calls, stream equal to whole")
        # Without one sample that thought, the split itself would be untested.
        check(with_reasoning > 0, "no sample with thinking on had a reasoning part: the split went untested")
        log(f"forced tool calls with --reasoning-parser qwen3: {with_reasoning} samples with reasoning_content "
            f"({time.monotonic() - t0:.1f} s)")


# ---- prefix caching with a grammar ---------------------------------------------------------------

CACHE_BLOCK_SIZE = 16
CACHE_PROMPT = " ".join(f"Record {i}: the inspector counted {i * 13} crates in warehouse {i % 7} and signed."
                        for i in range(24)) + " Now describe the person in JSON."
CACHE_SCHEMA = SWAP_SCHEMAS[0]


def case_prefix_cache(args):
    with Server(args, cache={"block_size": CACHE_BLOCK_SIZE, "enable_prefix_caching": True}) as server:
        check_equal(metric(metrics(server.port), "zinfer_prefix_cache_hit_rate"), 0.0, "hit rate of a fresh server")
        body = {"messages": [{"role": "user", "content": CACHE_PROMPT}], "n": 2, "max_tokens": 200,
                "temperature": 1.0, "seed": 5, "logit_bias": json_bias(args.model),
                "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": CACHE_SCHEMA}}}
        runs = []
        for k, stream in enumerate((False, False, True)):
            if stream:
                body = dict(body, stream_options={"include_usage": True})
            choices, usage = answer(server.port, body, True, stream)
            for c in choices:
                check_equal(c["finish_reason"], "stop", f"run {k} sample {c['index']}: finish_reason ({c['text']!r})")
                validate(CACHE_SCHEMA, c["text"], f"run {k} sample {c['index']}")
            runs.append((choices, usage))
            wait_idle(server.port)
        (first, u1), (second, u2), (third, u3) = runs
        prompt_tokens = u1["prompt_tokens"]
        check(prompt_tokens >= 10 * CACHE_BLOCK_SIZE, f"the prompt has only {prompt_tokens} tokens")
        cached_first = (u1.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        check_equal(cached_first, 0, "cached tokens of the first request")
        full_blocks = ((prompt_tokens - 1) // CACHE_BLOCK_SIZE) * CACHE_BLOCK_SIZE
        for name, u in (("the repeat", u2), ("the streamed repeat", u3)):
            check(u is not None, f"{name}: no usage")
            cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
            check(cached >= full_blocks, f"{name} had {cached} cached prompt tokens; expected at least "
                                         f"{full_blocks} of {prompt_tokens}")
        cached_second = u2["prompt_tokens_details"]["cached_tokens"]
        check_equal([c["text"] for c in second], [c["text"] for c in first], "the repeat's outputs (same seed)")
        hit_rate = metric(metrics(server.port), "zinfer_prefix_cache_hit_rate")
        check(hit_rate > 0, f"zinfer_prefix_cache_hit_rate is {hit_rate} after a repeated prompt")
        log(f"prefix cache: the repeat had {cached_second} of {prompt_tokens} prompt tokens cached (hit rate "
            f"{hit_rate:.3f}); all {3 * len(first)} samples valid, the repeat's equal to the first's")


CASES = {"stop": case_stop, "swap": case_swap, "tools_reasoning": case_tools_reasoning,
         "prefix_cache": case_prefix_cache}

if __name__ == "__main__":
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    p.add_argument("--case", choices=sorted(CASES), required=True)
    own, rest = p.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: CASES[own.case](ARGS), ARGS.timeout)
