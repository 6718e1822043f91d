"""e2e 1 and 7: both OpenAI endpoints answer, stream and non-stream (usage consistent, SSE framing,
data: [DONE]), and one prompt gives identical greedy tokens through `zinfer generate`, HTTP and
the ZeroMQ endpoint (examples/python/client.py, zinfer-client and a msgpack DEALER). Run with
--deployment serve (threads of one process) or --deployment launch (one process per actor)."""

# Invariant 11 (docs/architecture.md): the same actor code runs as threads (serve) or processes (launch).
# Invariant 31 (docs/architecture.md): the command line is a contract (`zinfer generate --json`).

import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, ZmqClient, check, check_equal, generate, http_request, log, main_wrapper,  # noqa: E402
                        metric, parse_args, post_json, stream_request, wait_idle)

PROMPT = "The quick brown fox jumps over the lazy dog. Once upon a time, in a land far away,"
MAX_TOKENS = 12
LOGPROB_TOLERANCE = 1e-3
SEED = 1234


def check_usage(usage, prompt_tokens, completion_tokens, what):
    check(isinstance(usage, dict), f"{what}: usage is {usage!r}")
    check_equal(usage.get("prompt_tokens"), prompt_tokens, f"{what}: usage.prompt_tokens")
    check_equal(usage.get("completion_tokens"), completion_tokens, f"{what}: usage.completion_tokens")
    check_equal(usage.get("total_tokens"), prompt_tokens + completion_tokens, f"{what}: usage.total_tokens")


def check_logprobs_close(got, expected, what):
    check_equal(len(got), len(expected), f"{what}: number of logprobs")
    for i, (g, e) in enumerate(zip(got, expected)):
        check(abs(g - e) <= LOGPROB_TOLERANCE, f"{what}: logprob {i} is {g}, `zinfer generate` gave {e}")


def completions_non_stream(server, ref, prompt_tokens):
    status, body = post_json(server.port, "/v1/completions", {
        "model": server.model_name, "prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0,
        "ignore_eos": True, "logprobs": 1, "return_token_ids": True})
    check_equal(status, 200, f"/v1/completions status (body {body!r})")
    check_equal(body.get("object"), "text_completion", "completions object")
    check(str(body.get("id", "")).startswith("cmpl-"), f"completions id {body.get('id')!r}")
    check_equal(body.get("model"), server.model_name, "completions model")
    check_equal(len(body["choices"]), 1, "number of choices")
    choice = body["choices"][0]
    check_equal(choice["token_ids"], ref["token_ids"], "HTTP completions token ids vs zinfer generate")
    check_equal(choice["text"], ref["text"], "HTTP completions text vs zinfer generate")
    check_equal(choice["finish_reason"], "length", "completions finish_reason")
    lp = choice["logprobs"]
    # vLLM's form: each token as its text (whole characters here), so they join into the text.
    check_equal("".join(lp["tokens"]), ref["text"], "completions logprobs tokens, joined")
    check_equal(len(lp["tokens"]), len(ref["token_ids"]), "completions logprobs tokens")
    check_logprobs_close(lp["token_logprobs"], ref["logprobs"], "completions logprobs")
    check_usage(body["usage"], prompt_tokens, MAX_TOKENS, "completions")
    status, as_ids = post_json(server.port, "/v1/completions", {
        "model": server.model_name, "prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0,
        "ignore_eos": True, "logprobs": 1, "return_tokens_as_token_ids": True})
    check_equal(status, 200, f"/v1/completions with return_tokens_as_token_ids (body {as_ids!r})")
    check_equal(as_ids["choices"][0]["logprobs"]["tokens"], [f"token_id:{t}" for t in ref["token_ids"]],
                "completions logprobs tokens with return_tokens_as_token_ids")
    log("completions (non-stream): identical to zinfer generate")


def completions_stream(server, ref, prompt_tokens):
    events = stream_request(server.port, "/v1/completions", {
        "prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True}, "return_token_ids": True})
    check(len(events) >= 2, f"a stream of {MAX_TOKENS} tokens has only {len(events)} events")
    ids = {e.get("id") for e in events}
    check_equal(len(ids), 1, "one id across the stream's chunks")
    check(next(iter(ids)).startswith("cmpl-"), f"stream id {ids!r}")
    *chunks, usage_chunk = events
    token_ids, text = [], ""
    for i, chunk in enumerate(chunks):
        check_equal(chunk.get("object"), "text_completion", f"chunk {i} object")
        check("usage" in chunk and chunk["usage"] is None, f"chunk {i} must carry usage: null, has {chunk!r}")
        check_equal(len(chunk["choices"]), 1, f"chunk {i} choices")
        choice = chunk["choices"][0]
        token_ids += choice["token_ids"]
        text += choice["text"]
        last = i == len(chunks) - 1
        check_equal(choice["finish_reason"], "length" if last else None, f"chunk {i} finish_reason")
    check_equal(token_ids, ref["token_ids"], "streamed token ids vs zinfer generate")
    check_equal(text, ref["text"], "streamed text vs zinfer generate")
    check_equal(usage_chunk.get("choices"), [], "the usage chunk's choices")
    check_usage(usage_chunk.get("usage"), prompt_tokens, MAX_TOKENS, "stream usage chunk")
    log(f"completions (stream): {len(chunks)} chunks, [DONE], usage chunk, identical tokens")


def completions_token_ids(server, ref_ids):
    """A prompt given as token ids, against `zinfer generate --prompt-ids`."""
    prompt_ids = [785, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13]
    ref = generate(server.args, MAX_TOKENS, prompt_ids=prompt_ids)
    status, body = post_json(server.port, "/v1/completions", {
        "prompt": prompt_ids, "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True, "return_token_ids": True})
    check_equal(status, 200, f"/v1/completions with token ids (body {body!r})")
    check_equal(body["choices"][0]["token_ids"], ref["token_ids"], "token-id prompt: HTTP vs zinfer generate")
    check_usage(body["usage"], len(prompt_ids), MAX_TOKENS, "token-id prompt")
    log("completions with a token-id prompt: identical to zinfer generate --prompt-ids")


def chat(server):
    ref = generate(server.args, MAX_TOKENS, prompt=PROMPT, chat=True)
    messages = [{"role": "user", "content": PROMPT}]
    status, body = post_json(server.port, "/v1/chat/completions", {
        "model": server.model_name, "messages": messages, "max_tokens": MAX_TOKENS, "temperature": 0,
        "ignore_eos": True, "logprobs": True, "return_tokens_as_token_ids": True})
    check_equal(status, 200, f"/v1/chat/completions status (body {body!r})")
    check_equal(body.get("object"), "chat.completion", "chat object")
    check(str(body.get("id", "")).startswith("chatcmpl-"), f"chat id {body.get('id')!r}")
    choice = body["choices"][0]
    check_equal(choice["message"]["role"], "assistant", "chat message role")
    check_equal(choice["message"]["content"], ref["text"], "chat content vs zinfer generate --chat")
    ids = [int(t["token"].split(":", 1)[1]) for t in choice["logprobs"]["content"]]
    check_equal(ids, ref["token_ids"], "chat token ids (from logprobs) vs zinfer generate --chat")
    check_logprobs_close([t["logprob"] for t in choice["logprobs"]["content"]], ref["logprobs"], "chat logprobs")
    check_equal(choice["finish_reason"], "length", "chat finish_reason")
    chat_prompt_tokens = body["usage"]["prompt_tokens"]
    check(chat_prompt_tokens > 0, "chat prompt_tokens > 0")
    check_usage(body["usage"], chat_prompt_tokens, MAX_TOKENS, "chat")

    events = stream_request(server.port, "/v1/chat/completions", {
        "messages": messages, "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True}})
    *chunks, usage_chunk = events
    check_equal(chunks[0]["choices"][0]["delta"], {"role": "assistant", "content": ""}, "chat stream's first delta")
    text = ""
    for i, chunk in enumerate(chunks):
        check_equal(chunk.get("object"), "chat.completion.chunk", f"chat chunk {i} object")
        check(chunk.get("usage", "missing") is None, f"chat chunk {i} must carry usage: null")
        if i > 0:
            text += chunk["choices"][0]["delta"].get("content", "")
    check_equal(chunks[-1]["choices"][0]["finish_reason"], "length", "chat stream's last finish_reason")
    check_equal(text, ref["text"], "chat streamed text vs zinfer generate --chat")
    check_usage(usage_chunk["usage"], chat_prompt_tokens, MAX_TOKENS, "chat stream usage")
    log("chat (non-stream and stream): identical to zinfer generate --chat")


def zeromq(server, ref, prompt_tokens):
    # The Python example client, as a user runs it.
    client_py = os.path.join(server.args.source_dir, "examples", "python", "client.py")
    clients = [["/usr/bin/python3", client_py]]
    if server.args.client:
        clients.append([server.args.client])
    for client in clients:
        done = subprocess.run(client + ["--endpoint", server.zmq_endpoint, "--prompt", PROMPT, "--max-tokens",
                                        str(MAX_TOKENS), "--temperature", "0", "--ignore-eos", "--json"],
                              capture_output=True, timeout=300)
        check_equal(done.returncode, 0, f"{client[-1]} exit status (stderr {done.stderr[-1000:]!r})")
        out = json.loads(done.stdout)
        check_equal(out["token_ids"], ref["token_ids"], f"{os.path.basename(client[-1])} token ids vs zinfer generate")
        check_equal(out["text"], ref["text"], f"{os.path.basename(client[-1])} text vs zinfer generate")
        log(f"ZeroMQ via {os.path.basename(client[-1])}: identical to zinfer generate")

    # Our own DEALER: two requests at once on one connection, with the usage fields.
    zc = ZmqClient(server.zmq_endpoint)
    try:
        zc.submit(1, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0.0, ignore_eos=True)
        zc.submit(2, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0.0, ignore_eos=True, logprobs=True)
        results = zc.collect([1, 2])
        for rid, r in results.items():
            check("error" not in r, f"ZeroMQ request {rid} failed: {r!r}")
            check_equal(r["token_ids"], ref["token_ids"], f"ZeroMQ request {rid} token ids vs zinfer generate")
            check_equal(r["finish_reason"], "length", f"ZeroMQ request {rid} finish_reason")
            check_equal(r["prompt_tokens"], prompt_tokens, f"ZeroMQ request {rid} prompt_tokens vs HTTP usage")
            check_equal(r["completion_tokens"], MAX_TOKENS, f"ZeroMQ request {rid} completion_tokens")
        zc.send(1, {"seq": 77, "sent_ns": 1234})  # Ping
        message_type, pong = zc.recv(30)
        check_equal((message_type, pong.get("seq"), pong.get("sent_ns")), (2, 77, 1234), "Pong for Ping")
    finally:
        zc.close()
    log("ZeroMQ DEALER: two concurrent requests identical to zinfer generate; Ping/Pong")


def seeded_sampling(server):
    """Greedy output of a random model often repeats one token; seeded sampling gives varied tokens,
    which must also be the same through every path (the seed fixes each request's generator)."""
    extra = ["--temperature", "0.8", "--seed", str(SEED)]
    command = [server.args.zinfer, "generate", "--model", os.path.abspath(server.args.model), "--prompt", PROMPT,
               "--max-tokens", str(MAX_TOKENS), "--ignore-eos", "--json"] + extra
    done = subprocess.run(command, capture_output=True, timeout=300)
    check_equal(done.returncode, 0, f"zinfer generate with a seed ({done.stderr[-500:]!r})")
    ref = json.loads(done.stdout)["token_ids"]
    check(len(set(ref)) > 1, f"seeded sampling gave one repeated token: {ref}")
    status, body = post_json(server.port, "/v1/completions", {
        "prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0.8, "seed": SEED, "ignore_eos": True,
        "return_token_ids": True})
    check_equal(status, 200, f"seeded completion ({body!r})")
    check_equal(body["choices"][0]["token_ids"], ref, "seeded HTTP tokens vs zinfer generate")
    client_py = os.path.join(server.args.source_dir, "examples", "python", "client.py")
    clients = [["/usr/bin/python3", client_py]] + ([[server.args.client]] if server.args.client else [])
    for client in clients:
        done = subprocess.run(client + ["--endpoint", server.zmq_endpoint, "--prompt", PROMPT, "--max-tokens",
                                        str(MAX_TOKENS), "--ignore-eos", "--json"] + extra,
                              capture_output=True, timeout=300)
        check_equal(done.returncode, 0, f"{client[-1]} with a seed (stderr {done.stderr[-1000:]!r})")
        check_equal(json.loads(done.stdout)["token_ids"], ref, f"seeded {os.path.basename(client[-1])} tokens")
    log("seeded sampling: identical tokens through zinfer generate, HTTP and ZeroMQ")


def body(args):
    ref = generate(args, MAX_TOKENS, prompt=PROMPT)
    check_equal(len(ref["token_ids"]), MAX_TOKENS, "zinfer generate's number of tokens")
    log(f"zinfer generate: {ref['token_ids']}")
    with Server(args) as server:
        server.args = args
        if server.deployment == "launch":
            actors = sorted(cmd[2] for cmd in server.group_processes() if len(cmd) > 2 and cmd[1] == "actor")
            check_equal(actors, sorted(["executor", "detokenizer", "scheduler", "tokenizer", "gateway"]),
                        "actor processes started by zinfer launch")
            sockets = sorted(f for f in os.listdir(server.dir) if f.endswith(".ipc"))
            check(sockets, f"no ipc socket in {server.dir}: the actors do not talk over the configured ipc paths")
            rings = sorted(f for f in os.listdir(server.dir) if f.endswith(".shm"))
            check_equal(rings, ["detokenizer.shm", "executor.shm"],
                        f"shm links in {server.dir} (the executor and the detokenizer bind them)")
            log(f"zinfer launch runs one process per actor: {actors}, talking over {sockets} and {rings}")
        status, _, data = http_request(server.port, "GET", "/health")
        check_equal(status, 200, "/health")
        status, _, data = http_request(server.port, "GET", "/v1/models")
        check_equal(status, 200, "/v1/models")
        models = json.loads(data)
        check_equal([m["id"] for m in models["data"]], [server.model_name], "/v1/models ids")

        # The prompt's length as the tokenizer counts it, from a 1-token request.
        status, one = post_json(server.port, "/v1/completions", {"prompt": PROMPT, "max_tokens": 1, "temperature": 0})
        check_equal(status, 200, f"1-token completion ({one!r})")
        prompt_tokens = one["usage"]["prompt_tokens"]
        check(prompt_tokens > 10, f"prompt_tokens {prompt_tokens} for a 20-word prompt")

        completions_non_stream(server, ref, prompt_tokens)
        completions_stream(server, ref, prompt_tokens)
        completions_token_ids(server, ref)
        chat(server)
        zeromq(server, ref, prompt_tokens)
        seeded_sampling(server)

        m = wait_idle(server.port)
        # Six HTTP requests of MAX_TOKENS each (the ZeroMQ ones may count too).
        check(metric(m, "zinfer_generation_tokens_total") >= 5 * MAX_TOKENS,
              f"zinfer_generation_tokens_total {m['zinfer_generation_tokens_total']} after 5 HTTP requests of "
              f"{MAX_TOKENS} tokens")
        check(m.get('zinfer_request_success_total{finished_reason="length"}', 0) >= 5,
              f"finished requests counted by reason 'length': {m!r}")
        check(server.alive(), "the server is still running")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
