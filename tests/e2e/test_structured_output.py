"""Issue 19, structured output through the server on the random-weight default model (CPU), over HTTP:

- 200 JSON Schemas: 180 from a seeded generator that covers the keywords the grammar engine
  compiles (types, properties/required, additionalProperties, enum/const, arrays with
  min/maxItems and prefixItems, nested objects, anyOf/oneOf, $ref/$defs, string formats and
  patterns, integer and number bounds), plus the 20 hand-written schemas of
  tests/data/structured/real_api_schemas.json, modelled on real APIs. Each goes through one of
  response_format json_schema, structured_outputs.json or guided_json, on /v1/chat/completions or
  /v1/completions, streamed or not (every keyword family meets both modes), with n = 4; every
  sample must finish ("stop"), parse as JSON and validate with python3-jsonschema (the reference
  validator, not our grammar).
- 50 regular expressions (every sample fully matches with Python's re) and choice lists.
- response_format json_object: every sample is a JSON object.
- Bad input: an invalid schema, an unsupported keyword, a regex that does not compile, a grammar
  that does not parse, two constraints at once: 400 naming the field, while a long request keeps
  streaming, and the server serves normally afterwards; the same over the ZeroMQ endpoint.
- Reasoning (a second server, --reasoning-parser qwen3): reasoning_content and content split,
  the constraint applying after </think>; an unknown parser name is a start-up error naming it.

The model's logits are small and random: within what the grammar allows it picks nearly
uniformly among 150k tokens, so a free string would rarely close. Each request therefore biases
the few tokens that close a string, an array or an object (logit_bias; a bias changes nothing
where the grammar masks the token), and the regex requests bias end-of-sequence, which the
grammar allows only where the regex accepts. For the same reason the patterns are anchored and
the regexes bound a repetition that a required character follows. What the outputs are is still
the grammar's doing: every token is sampled among those the mask leaves."""

import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (GENERATE_REQUEST, Server, ZmqClient, check, check_equal,  # noqa: E402
                        check_openai_error, log, main_wrapper, parse_args, post_json, stream_request)
from structured_common import THINK_END, eos_bias, json_bias, validate  # noqa: E402

N = 4
MAX_TOKENS = 400
CONCURRENCY = 8
SEED = 19

# ---- the schema generator ------------------------------------------------------------------------

WORDS = ["id", "name", "title", "count", "price", "tags", "owner", "status", "items", "score", "kind", "level",
         "color", "size", "note", "when", "where", "enabled", "ratio", "code"]
# Anchored: an unanchored pattern is a search, and a model picking tokens at random would take
# thousands of steps to write its match somewhere in the string.
PATTERNS = ["^[A-Z]{3}-\\d{3}$", "^[a-z]+$", "^(red|green|blue)$", "^\\d{2}:\\d{2}$", "^[A-Z][a-z]{1,6}$",
            "^v\\d+\\.\\d+$", "^#[0-9a-f]{6}$", "^ab+c$", "^[a-z]{2}_[A-Z]{2}$", "^(\\+|-)?\\d{1,4}$"]
FORMAT_NAMES = ["date", "time", "date-time", "uuid", "email", "ipv4"]

# The keyword families; schema i focuses on FAMILIES[i % len]. Their number is odd, so that with
# stream = i % 2 every family meets both modes.
FAMILIES = ["types", "required", "additional", "enum_const", "arrays", "nested", "anyof", "oneof", "ref",
            "strings", "numbers"]


class SchemaGen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def names(self, k):
        return self.r.sample(WORDS, k)

    def scalar(self):
        kind = self.r.choice(["string", "integer", "number", "boolean", "null", "string_bounded", "int_bounded"])
        if kind == "string_bounded":
            lo = self.r.randint(0, 3)
            return {"type": "string", "minLength": lo, "maxLength": lo + self.r.randint(1, 12)}
        if kind == "int_bounded":
            lo = self.r.randint(-50, 50)
            return {"type": "integer", "minimum": lo, "maximum": lo + self.r.randint(0, 500)}
        return {"type": kind}

    def string(self):
        kind = self.r.choice(["plain", "bounded", "pattern", "format"])
        if kind == "bounded":
            lo = self.r.randint(0, 4)
            return {"type": "string", "minLength": lo, "maxLength": lo + self.r.randint(0, 10)}
        if kind == "pattern":
            return {"type": "string", "pattern": self.r.choice(PATTERNS)}
        if kind == "format":
            return {"type": "string", "format": self.r.choice(FORMAT_NAMES)}
        return {"type": "string"}

    def number(self):
        kind = self.r.choice(["integer", "number"])
        s = {"type": kind}
        lo = self.r.randint(-1000, 1000)
        which = self.r.choice(["min", "max", "both", "exclusive", "none"])
        if which in ("min", "both"):
            s["minimum"] = lo
        if which in ("max", "both"):
            s["maximum"] = lo + self.r.randint(0, 2000)
        if which == "exclusive":
            s["exclusiveMinimum"] = lo
            s["exclusiveMaximum"] = lo + self.r.randint(2, 300)
        return s

    def obj(self, props, required=None, additional=False):
        s = {"type": "object", "properties": props}
        s["required"] = list(props) if required is None else required
        if additional is not None:
            s["additionalProperties"] = additional
        return s

    def family(self, name):
        r = self.r
        if name == "types":
            props = {n: self.scalar() for n in self.names(r.randint(2, 5))}
            k = next(iter(props))
            props[k] = {"type": r.choice([["string", "null"], ["integer", "boolean"], ["number", "string"]])}
            return self.obj(props)
        if name == "required":
            props = {n: self.scalar() for n in self.names(r.randint(3, 6))}
            required = r.sample(list(props), r.randint(0, len(props)))
            return self.obj(props, required)
        if name == "additional":
            props = {n: self.scalar() for n in self.names(r.randint(1, 3))}
            extra = r.choice([True, False, {"type": "integer"}, {"type": "string", "maxLength": 5}, None])
            return self.obj(props, additional=extra)
        if name == "enum_const":
            props = {}
            for n in self.names(r.randint(2, 4)):
                pick = r.randint(0, 3)
                if pick == 0:
                    props[n] = {"enum": r.sample(["a", "b", "c", 1, 2.5, True, None, "x y"], r.randint(1, 4))}
                elif pick == 1:
                    props[n] = {"const": r.choice(["fixed", 42, False, None, [1, 2], {"k": "v"}])}
                elif pick == 2:
                    props[n] = {"type": "string", "enum": ["on", "off", 3]}  # type filters the values
                else:
                    props[n] = {"type": "integer", "enum": [1, 2, 3, "4"]}
            return self.obj(props)
        if name == "arrays":
            props = {}
            for n in self.names(r.randint(1, 3)):
                lo = r.randint(0, 2)
                a = {"type": "array", "items": self.scalar(), "minItems": lo}
                if r.random() < 0.8:
                    a["maxItems"] = lo + r.randint(0, 3)
                if r.random() < 0.3:
                    a = {"type": "array", "prefixItems": [self.scalar(), self.scalar()], "minItems": 2,
                         "items": r.choice([False, {"type": "boolean"}])}
                    if a["items"] is not False:
                        a["maxItems"] = 2 + r.randint(0, 2)
                props[n] = a
            return self.obj(props)
        if name == "nested":
            inner = self.obj({n: self.scalar() for n in self.names(r.randint(1, 3))})
            middle = self.obj({"inner": inner, "flag": {"type": "boolean"}})
            return self.obj({"outer": middle, self.names(1)[0]: self.scalar()})
        if name == "anyof":
            branches = r.sample([{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 8},
                                 {"type": "null"}, {"type": "boolean"},
                                 self.obj({"a": {"type": "integer"}})], r.randint(2, 4))
            return self.obj({"value": {"anyOf": branches}, "label": {"type": "string", "maxLength": 6}})
        if name == "oneof":
            # Branches that do not overlap (the grammar generates oneOf as anyOf).
            branches = r.sample([{"type": "integer"}, {"type": "string", "maxLength": 6}, {"type": "null"},
                                 {"type": "boolean"},
                                 self.obj({"cat": {"type": "string", "maxLength": 5}}),
                                 self.obj({"dog": {"type": "integer"}})], r.randint(2, 4))
            return self.obj({"pet": {"oneOf": branches}})
        if name == "ref":
            defs = {"point": self.obj({"x": {"type": "integer", "minimum": -100, "maximum": 100},
                                       "y": {"type": "integer", "minimum": -100, "maximum": 100}}),
                    "tag": {"type": "string", "pattern": r.choice(PATTERNS)}}
            key = r.choice(["$defs", "definitions"])
            s = self.obj({"from": {"$ref": f"#/{key}/point"}, "to": {"$ref": f"#/{key}/point"},
                          "tags": {"type": "array", "items": {"$ref": f"#/{key}/tag"}, "maxItems": 2}})
            s[key] = defs
            if r.random() < 0.3:  # recursion through "#"
                s["properties"]["next"] = {"anyOf": [{"$ref": "#"}, {"type": "null"}]}
                s["required"] = ["from", "to", "next"]
            return s
        if name == "strings":
            return self.obj({n: self.string() for n in self.names(r.randint(2, 4))})
        if name == "numbers":
            return self.obj({n: self.number() for n in self.names(r.randint(2, 4))})
        raise ValueError(name)

    def schema(self, i):
        s = self.family(FAMILIES[i % len(FAMILIES)])
        if self.r.random() < 0.2:
            s["title"] = "generated"
            s["description"] = f"schema {i}"
        return s


def schema_cases(source_dir):
    with open(os.path.join(source_dir, "tests", "data", "structured", "real_api_schemas.json")) as f:
        real = json.load(f)
    gen = SchemaGen(SEED)
    cases = [(f"generated {i} ({FAMILIES[i % len(FAMILIES)]})", gen.schema(i)) for i in range(180)]
    cases += [(f"real {c['name']}", c["schema"]) for c in real]
    return cases


# ---- requests ------------------------------------------------------------------------------------

class Client:
    def __init__(self, server, model_dir):
        self.port = server.port
        self.json_bias = json_bias(model_dir)
        self.eos_bias = eos_bias()

    def body(self, i, chat, extra, bias):
        body = {"max_tokens": MAX_TOKENS, "n": N, "temperature": 1.0, "seed": 1000 + i, "logit_bias": bias}
        if chat:
            body["messages"] = [{"role": "user", "content": f"Answer in JSON, please ({i})."}]
        else:
            body["prompt"] = f"JSON {i}:"
        body.update(extra)
        return body

    def run(self, i, chat, stream, extra, bias):
        """Returns the n texts of one request and their finish reasons."""
        path = "/v1/chat/completions" if chat else "/v1/completions"
        body = self.body(i, chat, extra, bias)
        texts, finish = [""] * N, [None] * N
        if stream:
            for event in stream_request(self.port, path, dict(body, stream=True)):
                for c in event["choices"]:
                    piece = c["delta"].get("content") if chat else c["text"]
                    texts[c["index"]] += piece or ""
                    finish[c["index"]] = c["finish_reason"] or finish[c["index"]]
        else:
            status, out = post_json(self.port, path, body)
            check_equal(status, 200, f"request {i}: status (body {out!r})")
            check_equal(len(out["choices"]), N, f"request {i}: choices")
            for c in out["choices"]:
                texts[c["index"]] = c["message"]["content"] if chat else c["text"]
                finish[c["index"]] = c["finish_reason"]
        return texts, finish


def schema_field(i, schema):
    """Rotates over the three ways to give a schema (response_format only for objects, as OpenAI's)."""
    way = i % 3
    if way == 0 and schema.get("type") == "object":
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": f"s{i}", "schema": schema, "strict": True}}}
    if way == 1:
        return {"structured_outputs": {"json": schema}}
    return {"guided_json": schema if i % 2 else json.dumps(schema)}


def run_all(jobs):
    """Runs (name, function) jobs CONCURRENCY at a time; re-raises the first failure."""
    with concurrent.futures.ThreadPoolExecutor(CONCURRENCY) as pool:
        futures = {pool.submit(fn): name for name, fn in jobs}
        for future in concurrent.futures.as_completed(futures):
            future.result()


def check_schemas(client, source_dir):
    cases = schema_cases(source_dir)
    check_equal(len(cases), 200, "schemas")
    seen = {}

    def one(i, name, schema):
        stream, chat = bool(i % 2), (i // 2) % 2 == 0
        texts, finish = client.run(i, chat, stream, schema_field(i, schema), client.json_bias)
        for k, text in enumerate(texts):
            what = f"schema {name}, sample {k} ({'stream' if stream else 'whole'}, {'chat' if chat else 'completion'})"
            check_equal(finish[k], "stop", f"{what}: finish_reason (output {text!r})")
            validate(schema, text, what)
        seen.setdefault(FAMILIES[i % len(FAMILIES)] if i < 180 else "real", set()).add(stream)

    t0 = time.monotonic()
    run_all([(name, lambda i=i, name=name, schema=schema: one(i, name, schema))
             for i, (name, schema) in enumerate(cases)])
    for family, modes in seen.items():
        check_equal(modes, {False, True}, f"modes that '{family}' schemas went through")
    log(f"200 schemas x n={N}: every sample finished, parsed and validated ({time.monotonic() - t0:.0f} s)")


REGEXES = [
    r"\d{3}-\d{4}", r"[A-Z]{2}\d{2}", r"(cat|dog|bird)s?", r"[a-f0-9]{8}", r"\d+", r"[a-z]{1,8}@[a-z]{1,8}\.com",
    r"(yes|no)", r"0x[0-9A-F]{2,4}", r"[A-Z][a-z]{1,6} [A-Z][a-z]{1,6}", r"\d{4}-\d{2}-\d{2}", r"v\d+\.\d+\.\d+",
    r"(ab|cd)*e", r"a{2,5}b?", r"[^\n\"]{3,10}", r"\(\d{3}\) \d{3}-\d{4}", r"#[0-9a-fA-F]{6}", r"[01]{8}",
    r"(\+|-)?\d{1,3}(\.\d{1,2})?", r"[A-Za-z_][A-Za-z0-9_]{0,10}", r"true|false|null", r"\w{4}", r"\s?x\s?",
    r"(GET|POST|PUT) /[a-z]{1,8}", r"[aeiou]{3}", r"ID-\d{5}", r"(\d{1,3}\.){3}\d{1,3}", r"[A-Z]{3}/[A-Z]{3}",
    r"x*y+z?", r"(foo|bar)(baz|qux)", r"[.?!]{1,3}", r"\d\d:\d\d", r"[a-z]{2}-[A-Z]{2}", r"(a|b|c){4}",
    r"Q[1-4] 20\d\d", r"[^a-z\n]{2,4}", r"(red|green|blue)-\d", r"\$\d+\.\d\d", r"[xyz]{1,3}[0-9]",
    r"(ha){2,4}!", r"[A-Z]+", r"<[a-z]{1,5}>", r"\d{2,3}%", r"(0|[1-9]\d*)", r"[a-z]+(-[a-z]+){0,2}",
    r"[+*/-]", r"(https?)://[a-z]{3,8}\.(com|org)", r"\[\d\]", r"[A-Z]\d[A-Z] \d[A-Z]\d", r"(up|down){1,3}",
    r"[0-7]{3}",
]
CHOICES = [["yes", "no"], ["positive", "negative", "neutral"], ["A", "B", "C", "D"], ["red", "green"],
           ["x", "xy", "xyz"], ["Paris", "London", "New York", "東京"], ["1", "2", "3", "10", "100"],
           ["true", "false"], ["north", "south", "east", "west"], ["a b c", "a b", "a"]]


def check_regexes_and_choices(client):
    check_equal(len(REGEXES), 50, "regexes")

    def regex(i, pattern):
        stream, chat = bool(i % 2), (i // 2) % 2 == 0
        field = {"guided_regex": pattern} if i % 3 else {"structured_outputs": {"regex": pattern}}
        texts, finish = client.run(2000 + i, chat, stream, field, client.eos_bias)
        for k, text in enumerate(texts):
            check_equal(finish[k], "stop", f"regex {pattern!r} sample {k}: finish_reason (output {text!r})")
            check(re.fullmatch(pattern, text) is not None, f"regex {pattern!r} sample {k}: {text!r} does not match")

    def choice(i, options):
        stream, chat = bool(i % 2), (i // 2) % 2 == 0
        field = {"guided_choice": options} if i % 2 else {"structured_outputs": {"choice": options}}
        texts, finish = client.run(3000 + i, chat, stream, field, {})
        for k, text in enumerate(texts):
            check(text in options, f"choice {options} sample {k}: {text!r} is not one of them")
            check_equal(finish[k], "stop", f"choice {options} sample {k}: finish_reason")

    jobs = [(f"regex {p}", lambda i=i, p=p: regex(i, p)) for i, p in enumerate(REGEXES)]
    jobs += [(f"choice {c}", lambda i=i, c=c: choice(i, c)) for i, c in enumerate(CHOICES)]
    run_all(jobs)
    log(f"{len(REGEXES)} regexes fully matched and {len(CHOICES)} choice lists kept, n={N}, stream and not")


def check_json_object(client):
    def one(i):
        stream, chat = bool(i % 2), (i // 2) % 2 == 0
        texts, finish = client.run(4000 + i, chat, stream, {"response_format": {"type": "json_object"}},
                                   client.json_bias)
        for k, text in enumerate(texts):
            check_equal(finish[k], "stop", f"json_object {i} sample {k}: finish_reason (output {text!r})")
            value = validate({"type": "object"}, text, f"json_object {i} sample {k}")
            check(isinstance(value, dict), f"json_object: {text!r} is not an object")

    run_all([(f"json_object {i}", lambda i=i: one(i)) for i in range(4)])
    log("response_format json_object: every sample a JSON object")


# ---- bad input -----------------------------------------------------------------------------------

BAD = [
    ("invalid schema", {"guided_json": {"type": "object", "properties": 3}}, "guided_json", "properties"),
    ("schema that is not JSON", {"structured_outputs": {"json": "{\"type\": "}}, "structured_outputs.json", "schema"),
    ("unsupported keyword", {"response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "object", "patternProperties": {"^a": {"type": "string"}}}}}},
     "response_format.json_schema.schema", "patternProperties"),
    ("unsupported keyword deep inside", {"structured_outputs": {"json": {"type": "object", "properties": {
        "a": {"type": "array", "items": {"type": "integer", "multipleOf": 3}}}}}}, "structured_outputs.json",
     "multipleOf"),
    ("regex that does not compile", {"guided_regex": "(ab"}, "guided_regex", "regex"),
    ("regex lookahead", {"structured_outputs": {"regex": "a(?=b)"}}, "structured_outputs.regex", "lookahead"),
    ("grammar that does not parse", {"guided_grammar": "root ::= \"a"}, "guided_grammar", "grammar"),
    ("grammar without root", {"structured_outputs": {"grammar": "start ::= \"a\""}}, "structured_outputs.grammar",
     "root"),
    ("two constraints", {"guided_regex": "a", "response_format": {"type": "json_object"}}, "guided_regex", "both"),
    ("two constraints in structured_outputs", {"structured_outputs": {"regex": "a", "choice": ["a"]}},
     "structured_outputs.regex", "both"),
    ("unknown structured_outputs key", {"structured_outputs": {"jsonschema": {}}}, "structured_outputs.jsonschema",
     "jsonschema"),
    ("whitespace pattern", {"guided_json": {"type": "object"}, "guided_whitespace_pattern": " *"},
     "guided_whitespace_pattern", "whitespace"),
]


def check_bad_input(server, client):
    # A long request streams while the bad ones are refused; it must end normally.
    long_body = client.body(9000, True, {"max_tokens": 120, "n": 1, "ignore_eos": True}, {})
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        long_run = pool.submit(stream_request, server.port, "/v1/chat/completions", dict(long_body, stream=True))
        for what, extra, field, named in BAD:
            for chat in (True, False):
                path = "/v1/chat/completions" if chat else "/v1/completions"
                status, out = post_json(server.port, path, client.body(0, chat, extra, {}))
                check_openai_error(status, out, 400, what)
                check_equal(out["error"]["param"], field, f"{what}: the field named")
                check(named in out["error"]["message"], f"{what}: the message does not name {named!r}: {out!r}")
        events = long_run.result()
    finish = [c["finish_reason"] for e in events for c in e["choices"] if c.get("finish_reason")]
    check_equal(finish, ["length"], "the request that ran beside the refused ones")
    log(f"{len(BAD)} bad inputs x 2 endpoints: 400 naming the field and the construct; a stream beside them ran on")

    # The ZeroMQ endpoint: a GenerateRequest whose structured output does not compile, and one that does.
    zc = ZmqClient(server.zmq_endpoint)
    try:
        structured = {"kind": 0, "text": "{\"type\": \"object\", \"not\": {}}", "choices": [], "begin_after": ""}
        zc.submit(1, prompt="x", max_tokens=8, structured=structured)
        good = {"kind": 3, "text": "", "choices": ["alpha", "beta"], "begin_after": ""}
        zc.submit(2, prompt="x", max_tokens=8, structured=good)
        results = zc.collect([1, 2])
    finally:
        zc.close()
    err = results[1].get("error")
    check(err is not None, f"ZeroMQ: a schema with 'not' was accepted: {results[1]!r}")
    check_equal(err["code"], 400, "ZeroMQ: ErrorReply code")
    check("'not'" in err["message"] and "sampling.structured" in err["message"],
          f"ZeroMQ: the ErrorReply does not name the field and the keyword: {err!r}")
    check(results[2].get("text") in ("alpha", "beta"), f"ZeroMQ: choice output {results[2]!r}")
    log("ZeroMQ: a structured output that does not compile is an ErrorReply 400 naming it; one that does is kept")


# ---- reasoning -----------------------------------------------------------------------------------

def check_reasoning(args):
    schema = {"type": "object", "properties": {"answer": {"type": "integer", "minimum": 0, "maximum": 99}},
              "required": ["answer"], "additionalProperties": False}
    with Server(args, server={"reasoning_parser": "qwen3"}) as server:
        client = Client(server, args.model)
        # Thinking on: tokens are free until </think> (biased so that it comes after a few), then the schema.
        bias = dict(client.json_bias, **{str(THINK_END): 11})
        rf = {"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}}
        body = client.body(1, True, rf, bias)
        status, out = post_json(server.port, "/v1/chat/completions", body)
        check_equal(status, 200, f"reasoning: status ({out!r})")
        for c in out["choices"]:
            check_equal(c["finish_reason"], "stop", f"reasoning: finish_reason ({c!r})")
            validate(schema, c["message"]["content"], "reasoning: content after </think>")
            check("</think>" not in (c["message"]["reasoning_content"] or ""), "reasoning: the tag left in")
        events = stream_request(server.port, "/v1/chat/completions", dict(body, stream=True, seed=2))
        parts = [{"reasoning": "", "content": "", "order": []} for _ in range(N)]
        for e in events:
            for c in e["choices"]:
                p = parts[c["index"]]
                for key, name in (("reasoning_content", "reasoning"), ("content", "content")):
                    if c["delta"].get(key):
                        p[name] += c["delta"][key]
                        p["order"].append(name)
        for p in parts:
            validate(schema, p["content"], "reasoning, stream: content after </think>")
            order = p["order"]
            check(order == sorted(order, key=lambda n: n == "content"),
                  f"reasoning, stream: reasoning deltas after content: {order}")
        # Thinking off (Qwen3's template closes the part in the prompt): all content, constrained at once.
        off = client.body(3, True, dict(rf, chat_template_kwargs={"enable_thinking": False}), client.json_bias)
        status, out = post_json(server.port, "/v1/chat/completions", off)
        check_equal(status, 200, f"reasoning off: status ({out!r})")
        for c in out["choices"]:
            validate(schema, c["message"]["content"], "enable_thinking false: content")
            check(c["message"]["reasoning_content"] is None, f"enable_thinking false: reasoning {c!r}")
    log("--reasoning-parser qwen3: reasoning_content then content, the schema applying after </think>")

    # An unknown parser is a start-up error naming it.
    done = subprocess.run([args.zinfer, "serve", os.path.abspath(args.model), "--port", "0", "--zmq-endpoint", "",
                           "--reasoning-parser", "qwen9"], capture_output=True, timeout=120)
    text = (done.stdout + done.stderr).decode(errors="replace")
    check(done.returncode != 0, "zinfer serve --reasoning-parser qwen9 started")
    check("qwen9" in text and "reasoning_parser" in text, f"the start-up error does not name the parser: {text[-500:]}")
    log("--reasoning-parser qwen9: start-up error naming it")


def main(args):
    with Server(args) as server:
        client = Client(server, args.model)
        check_bad_input(server, client)
        check_json_object(client)
        check_regexes_and_choices(client)
        check_schemas(client, args.source_dir)
        # Still serving normally.
        status, out = post_json(server.port, "/v1/completions", {"prompt": "x", "max_tokens": 3})
        check_equal(status, 200, "a plain request after everything")
    check_reasoning(args)
    log("structured output: all checks passed")


if __name__ == "__main__":
    _args = parse_args(__doc__)
    main_wrapper(lambda: main(_args), timeout_s=_args.timeout)
