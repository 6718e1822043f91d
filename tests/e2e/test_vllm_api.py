"""e2e (issue 20): what a vLLM user relies on, through `zinfer serve MODEL [flags]` with no config
file: /version, /ping (GET and POST), /tokenize (prompt and messages) and /detokenize in vLLM's
shapes, agreeing with the token counts of generation; stop_token_ids end a choice without their
text (with it under include_stop_str_in_output) and stop_reason names the stop token or string;
an out-of-vocabulary stop token and an unknown field are 400s naming them; --served-model-name
with an alias; --generation-config FOLDER gives the defaults of fields a request leaves out.
Completions as vLLM's: prompt_logprobs computed by the CPU backend agree with the logprobs of the
greedy tokens it sampled (rank 1), with or without a prefix-cache hit; echo and the scoring call
(max_tokens 0); batched prompts with n. Chat: continue_final_message; a request's chat_template
refused unless --trust-request-chat-template, then honoured. /metrics has vLLM's names with values."""

import json
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (HOST, Server, check, check_equal, check_openai_error, http_request, log,  # noqa: E402
                        main_wrapper, parse_args, post_json, stream_request)

PROMPT = "Once upon a time, in a land far away, there lived"


def complete(server, **fields):
    body = {"prompt": PROMPT, "temperature": 0, "ignore_eos": True, "return_token_ids": True}
    body.update(fields)
    status, out = post_json(server.port, "/v1/completions", body)
    check_equal(status, 200, f"completion {fields} ({out!r})")
    return out["choices"][0]


def endpoints(server):
    status, _, data = http_request(server.port, "GET", "/version")
    check_equal(status, 200, "/version status")
    check(isinstance(json.loads(data).get("version"), str), f"/version body {data!r}")
    for method in ("GET", "POST"):
        status, _, data = http_request(server.port, method, "/ping")
        check_equal(status, 200, f"{method} /ping status")

    status, tok = post_json(server.port, "/tokenize", {"prompt": PROMPT})
    check_equal(status, 200, f"/tokenize ({tok!r})")
    check_equal(tok["count"], len(tok["tokens"]), "/tokenize count")
    check(tok["max_model_len"] > 0, f"/tokenize max_model_len {tok['max_model_len']}")
    check_equal(tok["token_strs"], None, "/tokenize token_strs without return_token_strs")
    status, out = post_json(server.port, "/v1/completions", {"prompt": PROMPT, "max_tokens": 1})
    check_equal(out["usage"]["prompt_tokens"], tok["count"], "/tokenize count vs the completion's prompt_tokens")
    status, strs = post_json(server.port, "/tokenize", {"prompt": PROMPT, "return_token_strs": True})
    check_equal(len(strs["token_strs"]), strs["count"], "one token string per token")
    status, detok = post_json(server.port, "/detokenize", {"tokens": tok["tokens"]})
    check_equal(status, 200, f"/detokenize ({detok!r})")
    check_equal(detok["prompt"], PROMPT, "/detokenize of /tokenize")

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}]
    status, chat_tok = post_json(server.port, "/tokenize", {"messages": messages})
    check_equal(status, 200, f"/tokenize messages ({chat_tok!r})")
    status, out = post_json(server.port, "/v1/chat/completions", {"messages": messages, "max_tokens": 1})
    check_equal(out["usage"]["prompt_tokens"], chat_tok["count"], "/tokenize messages vs the chat's prompt_tokens")
    status, no_prompt = post_json(server.port, "/tokenize", {"messages": messages, "add_generation_prompt": False})
    check(no_prompt["count"] < chat_tok["count"], "add_generation_prompt false gives fewer tokens")

    status, out = post_json(server.port, "/tokenize", {"prompt": PROMPT, "frobnicate": 1})
    check_openai_error(status, out, 400, "/tokenize with an unknown field")
    check_equal(out["error"]["param"], "frobnicate", "the unknown field is named")
    status, out = post_json(server.port, "/detokenize", {"tokens": [10 ** 8]})
    check_openai_error(status, out, 400, "/detokenize of an id outside the vocabulary")
    log("/version, /ping, /tokenize (prompt, messages), /detokenize: as vLLM's")


def stops(server):
    ref = complete(server, max_tokens=8)
    ids = ref["token_ids"]
    stop_id = ids[3]
    j = ids.index(stop_id)  # its first occurrence ends the choice
    before = complete(server, max_tokens=j)["text"] if j > 0 else ""
    through = complete(server, max_tokens=j + 1)["text"]

    got = complete(server, max_tokens=8, stop_token_ids=[stop_id])
    check_equal(got["finish_reason"], "stop", "finish_reason on a stop token")
    check_equal(got["stop_reason"], stop_id, "stop_reason names the stop token")
    check_equal(got["token_ids"], ids[:j + 1], "the stop token ends the choice and is in its token ids")
    check_equal(got["text"], before, "the stop token's text is left out")
    kept = complete(server, max_tokens=8, stop_token_ids=[stop_id], include_stop_str_in_output=True)
    check_equal(kept["text"], through, "include_stop_str_in_output keeps the stop token's text")
    check_equal(kept["stop_reason"], stop_id, "stop_reason with include_stop_str_in_output")
    check_equal(ref["stop_reason"], None, "stop_reason of a choice that ran to its length")

    events = stream_request(server.port, "/v1/completions", {
        "prompt": PROMPT, "temperature": 0, "ignore_eos": True, "max_tokens": 8, "stream": True,
        "stop_token_ids": [stop_id]})
    check_equal(events[-1]["choices"][0]["stop_reason"], stop_id, "stop_reason in the stream's last chunk")
    check_equal("".join(e["choices"][0]["text"] for e in events), before, "streamed text without the stop token")

    text = ref["text"]
    check(len(text) >= 6, f"8 tokens of text to cut a stop string from: {text!r}")
    stop = text[2:5]
    cut = text.index(stop)
    got = complete(server, max_tokens=8, stop=[stop])
    check_equal(got["finish_reason"], "stop", "finish_reason on a stop string")
    check_equal(got["stop_reason"], stop, "stop_reason names the stop string")
    check_equal(got["text"], text[:cut], "text before the stop string")
    kept = complete(server, max_tokens=8, stop=[stop], include_stop_str_in_output=True)
    check_equal(kept["text"], text[:cut + len(stop)], "include_stop_str_in_output keeps the stop string")

    status, out = post_json(server.port, "/v1/completions", {"prompt": PROMPT, "stop_token_ids": [10 ** 8]})
    check_openai_error(status, out, 400, "a stop token outside the vocabulary")
    check("stop_token_ids" in out["error"]["message"], f"the error names stop_token_ids: {out!r}")
    status, out = post_json(server.port, "/v1/completions", {"prompt": PROMPT, "max_token": 3})
    check_openai_error(status, out, 400, "an unknown field")
    check_equal(out["error"]["param"], "max_token", "the unknown field is named")
    status, out = post_json(server.port, "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "x"}], "response_format": {"type": "structural_tag"}})
    check_openai_error(status, out, 400, "response_format structural_tag")
    check_equal(out["error"]["param"], "response_format.type", "response_format.type is named")
    log("stop_token_ids, stop strings, stop_reason, include_stop_str_in_output: as vLLM's")


def prompt_scoring(server):
    status, tok = post_json(server.port, "/tokenize", {"prompt": PROMPT})
    prompt_ids = tok["tokens"]
    greedy = complete(server, max_tokens=6, logprobs=0)
    ids = greedy["token_ids"]
    # The prompt + the greedy tokens, scored: each greedy token is the most likely (rank 1) and has
    # the logprob sampling gave it.
    for attempt in ("first", "again (the prompt's blocks are cached now)"):
        status, out = post_json(server.port, "/v1/completions", {
            "prompt": prompt_ids + ids, "max_tokens": 1, "temperature": 0, "prompt_logprobs": 2})
        check_equal(status, 200, f"prompt_logprobs ({out!r})")
        pl = out["choices"][0]["prompt_logprobs"]
        check_equal(len(pl), len(prompt_ids) + len(ids), f"one entry per prompt token, {attempt}")
        check_equal(pl[0], None, "the first prompt token has none")
        for k, token in enumerate(ids):
            entry = pl[len(prompt_ids) + k][str(token)]
            check_equal(entry["rank"], 1, f"greedy token {k} is rank 1 ({entry!r}), {attempt}")
            want = greedy["logprobs"]["token_logprobs"][k]
            check(abs(entry["logprob"] - want) < 1e-3, f"token {k}: prompt logprob {entry['logprob']} vs sampled {want}")
            check(len(pl[len(prompt_ids) + k]) <= 3, "the token and at most 2 alternatives")
    # The scoring call: echo with max_tokens 0 gives the prompt and its logprobs only.
    status, out = post_json(server.port, "/v1/completions", {
        "prompt": PROMPT, "max_tokens": 0, "echo": True, "logprobs": 1, "temperature": 0})
    check_equal(status, 200, f"the scoring call ({out!r})")
    c = out["choices"][0]
    check_equal(c["text"], PROMPT, "the scoring call echoes the prompt only")
    check_equal(len(c["logprobs"]["tokens"]), len(prompt_ids), "one logprob entry per prompt token")
    check_equal("".join(c["logprobs"]["tokens"]), PROMPT, "the token strings spell the prompt")
    check_equal(c["logprobs"]["text_offset"][-1], len(PROMPT) - len(c["logprobs"]["tokens"][-1]), "the last offset")
    # Echo with generation: the prompt, then what greedy generates.
    echo = complete(server, max_tokens=6, echo=True)
    check_equal(echo["text"], PROMPT + greedy["text"], "echo prepends the prompt")
    # A batch with n: choices i * n + j; the same greedy prompt gives the same text.
    status, out = post_json(server.port, "/v1/completions", {
        "prompt": [PROMPT, PROMPT], "n": 2, "max_tokens": 6, "temperature": 0, "ignore_eos": True})
    check_equal(status, 200, f"a batch ({out!r})")
    check_equal([ch["index"] for ch in out["choices"]], [0, 1, 2, 3], "choice indexes")
    check(all(ch["text"] == greedy["text"] for ch in out["choices"]), "every choice of the greedy batch")
    check_equal(out["usage"]["prompt_tokens"], 2 * len(prompt_ids), "usage counts both prompts")
    log("prompt_logprobs (rank 1 for greedy tokens, equal logprobs), echo, scoring call, batches: as vLLM's")


def chat_and_metrics(server):
    messages = [{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Hi there, I am"}]
    status, out = post_json(server.port, "/v1/chat/completions", {
        "messages": messages, "max_tokens": 3, "add_generation_prompt": False, "continue_final_message": True})
    check_equal(status, 200, f"continue_final_message ({out!r})")
    status, closed = post_json(server.port, "/tokenize", {"messages": messages, "add_generation_prompt": False})
    check(out["usage"]["prompt_tokens"] < closed["count"], "the continued message is left open (no end-of-turn tokens)")
    status, out = post_json(server.port, "/v1/chat/completions", {"messages": messages, "continue_final_message": True})
    check_openai_error(status, out, 400, "continue_final_message with add_generation_prompt")
    check_equal(out["error"]["param"], "continue_final_message", "named")
    status, out = post_json(server.port, "/v1/chat/completions", {
        "messages": messages, "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"})
    check_openai_error(status, out, 400, "a request's chat_template on a server that does not trust them")
    check_equal(out["error"]["param"], "chat_template", "named")

    status, _, text = http_request(server.port, "GET", "/metrics")
    text = text.decode() if isinstance(text, bytes) else text
    values = {}
    for line in text.splitlines():
        if line.startswith("vllm:") and "{" in line:
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    label = f'model_name="{server.model_name}"'
    for name in ("vllm:request_queue_time_seconds_count", "vllm:request_prefill_time_seconds_count",
                 "vllm:request_decode_time_seconds_count", "vllm:e2e_request_latency_seconds_count",
                 "vllm:time_to_first_token_seconds_count", "vllm:iteration_tokens_total_count",
                 "vllm:prompt_tokens_total", "vllm:generation_tokens_total"):
        check(values.get(f"{name}{{{label}}}", 0) > 0, f"{name} has a value ({values.get(name + '{' + label + '}')})")
    check(values.get(f'vllm:request_success_total{{{label},finished_reason="length"}}', 0) > 0, "request_success_total")
    log("continue_final_message, chat_template refused, vLLM's metric names: as vLLM's")


def trusted_template(server):
    messages = [{"role": "user", "content": "alpha"}, {"role": "critic", "content": "beta"}]
    status, out = post_json(server.port, "/v1/chat/completions", {
        "messages": messages, "max_tokens": 1, "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"})
    check_equal(status, 200, f"a request's chat_template on a trusting server ({out!r})")
    status, tok = post_json(server.port, "/tokenize", {"prompt": "alphabeta", "add_special_tokens": False})
    check_equal(out["usage"]["prompt_tokens"], tok["count"], "the request's template (and its custom role) rendered")
    log("--trust-request-chat-template: a request's template and a custom role honoured")


def names_and_defaults(server, greedy_ids):
    status, out = post_json(server.port, "/v1/completions", {
        "model": "alias", "prompt": PROMPT, "max_tokens": 8, "ignore_eos": True, "return_token_ids": True})
    check_equal(status, 200, f"a request naming the alias ({out!r})")
    # No temperature in the request: the generation config's 0 applies, so the tokens are greedy.
    check_equal(out["choices"][0]["token_ids"], greedy_ids, "tokens under generation_config temperature 0")
    status, _, data = http_request(server.port, "GET", "/v1/models")
    check_equal([m["id"] for m in json.loads(data)["data"]], ["main", "alias"], "/v1/models lists every name")
    log("--served-model-name with an alias, --generation-config FOLDER: applied")


def body(args):
    model = os.path.abspath(args.model)

    def cli(port, zmq_endpoint, *extra):
        return [model, "--host", HOST, "--port", port, "--zmq-endpoint", zmq_endpoint, "--device", "cpu",
                "--tokenizer-workers", 1, "--log-level", "warn", *extra]

    with Server(args, cli=cli) as server:
        endpoints(server)
        stops(server)
        greedy_ids = complete(server, max_tokens=8)["token_ids"]
        prompt_scoring(server)
        chat_and_metrics(server)

    with Server(args, cli=lambda p, z: cli(p, z, "--trust-request-chat-template")) as server:
        trusted_template(server)

    folder = tempfile.mkdtemp(prefix="zinfer-genconfig-")
    try:
        with open(os.path.join(folder, "generation_config.json"), "w") as f:
            json.dump({"temperature": 0.0, "top_k": 20}, f)
        with Server(args, cli=lambda p, z: cli(p, z, "--served-model-name", "main", "alias",
                                               "--generation-config", folder)) as server:
            names_and_defaults(server, greedy_ids)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
