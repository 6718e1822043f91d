"""Issue 20, sampling: every logits-processing field of vLLM's request schema is honoured over HTTP
on the CPU server, both endpoints: logit_bias (OpenAI's token-id strings), allowed_token_ids,
repetition_penalty over the prompt, frequency and presence penalties over the output, min_tokens
(eos and stop_token_ids masked, not merely kept going), bad_words (one token and a token sequence),
min_p and truncate_prompt_tokens; token ids outside the vocabulary are a 400 naming the field.
The default model's weights are random and its logits small, so each check steers the choice with
large biases whose margins the model's own logits cannot overturn."""

import json
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, check, check_equal, check_openai_error, log, main_wrapper, parse_args,  # noqa: E402
                        post_json)

EOS = 151645  # the default model's (Qwen3's) <|im_end|>


def vocab_of(model_dir):
    with open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8") as f:
        return json.load(f)["model"]["vocab"]


def complete(server, extra, prompt=None, max_tokens=12):
    body = {"prompt": prompt if prompt is not None else [9707, 11, 1879, 0], "max_tokens": max_tokens,
            "temperature": 0, "ignore_eos": True, "return_token_ids": True}
    body.update(extra)
    status, out = post_json(server.port, "/v1/completions", body)
    check_equal(status, 200, f"completions {extra} (body {out!r})")
    choice = out["choices"][0]
    return choice["token_ids"], choice["finish_reason"], out["usage"]


def chat(server, extra, max_tokens=8):
    body = {"messages": [{"role": "user", "content": "Say something."}], "max_tokens": max_tokens,
            "temperature": 0, "ignore_eos": True, "return_token_ids": True}
    body.update(extra)
    status, out = post_json(server.port, "/v1/chat/completions", body)
    check_equal(status, 200, f"chat {extra} (body {out!r})")
    return out["choices"][0]["token_ids"]


def check_bias_and_allowed(server):
    tokens, _, _ = complete(server, {"logit_bias": {"1000": 100}})
    check_equal(tokens, [1000] * 12, "logit_bias +100 makes the token the greedy choice")
    check_equal(chat(server, {"logit_bias": {"2000": 100}}), [2000] * 8, "chat: logit_bias")
    allowed = [1000, 2000, 3000]
    tokens, _, _ = complete(server, {"allowed_token_ids": allowed, "temperature": 1.0, "seed": 3})
    check(set(tokens) <= set(allowed), f"allowed_token_ids: {tokens} leave {allowed}")
    check(set(chat(server, {"allowed_token_ids": allowed, "temperature": 1.0, "seed": 4})) <= set(allowed),
          "chat: allowed_token_ids")
    log("logit_bias and allowed_token_ids honoured on both endpoints")


def check_penalties(server):
    # Repetition over the prompt: 1000 is in the prompt, so its +20 is divided by 10 (2) and the
    # +10 of 2000 wins; then 2000 is penalised too and 1000 comes back.
    steer = {"allowed_token_ids": [1000, 2000], "logit_bias": {"1000": 20, "2000": 10}}
    prompt = [9707, 1000, 11, 0]
    plain, _, _ = complete(server, steer, prompt)
    check_equal(plain[:2], [1000, 1000], "without repetition_penalty")
    penalised, _, _ = complete(server, dict(steer, repetition_penalty=10.0), prompt)
    check_equal(penalised[:3], [2000, 1000, 1000], "repetition_penalty over prompt and output")
    # Frequency grows with each use (the two alternate once 1000 lost its head start); presence
    # is paid once (2000 appears once, then 1000 wins again for good).
    freq, _, _ = complete(server, {"allowed_token_ids": [1000, 2000], "logit_bias": {"1000": 100, "2000": 95},
                                   "frequency_penalty": 2.0})
    check(freq[:2] == [1000] * 2 and freq.count(2000) >= 3, f"frequency_penalty: {freq}")
    pres, _, _ = complete(server, {"allowed_token_ids": [1000, 2000], "logit_bias": {"1000": 100, "2000": 99},
                                   "presence_penalty": 2.0})
    check_equal(pres[:3], [1000, 2000, 1000], "presence_penalty")
    check_equal(pres.count(2000), 1, f"presence_penalty is paid once per token: {pres}")
    # With a head start of 5, presence (paid once) never lets 2000 through; frequency does.
    steer = {"allowed_token_ids": [1000, 2000], "logit_bias": {"1000": 100, "2000": 95}}
    tokens = chat(server, dict(steer, presence_penalty=2.0), max_tokens=12)
    check_equal(tokens, [1000] * 12, "chat: presence_penalty is paid once")
    tokens = chat(server, dict(steer, frequency_penalty=2.0), max_tokens=12)
    check(tokens[:2] == [1000] * 2 and tokens.count(2000) >= 3, f"chat: frequency_penalty: {tokens}")
    log("repetition, frequency and presence penalties honoured")


def check_min_tokens(server):
    steer = {"allowed_token_ids": [1000, EOS], "logit_bias": {str(EOS): 100}, "ignore_eos": False}
    # The stopping token may or may not be listed in token_ids: what counts is what came before.
    tokens, why, _ = complete(server, steer)
    check(why == "stop" and tokens in ([], [EOS]), f"eos at once without min_tokens: {tokens} {why}")
    tokens, why, _ = complete(server, dict(steer, min_tokens=4))
    check(why == "stop" and tokens[:4] == [1000] * 4 and tokens[4:] in ([], [EOS]),
          f"min_tokens masks eos for 4 tokens: {tokens} {why}")
    steer = {"allowed_token_ids": [1000, 2000], "logit_bias": {"1000": 100}, "stop_token_ids": [1000]}
    tokens, why, _ = complete(server, dict(steer, min_tokens=3))
    check(why == "stop" and tokens[:3] == [2000] * 3 and tokens[3:] in ([], [1000]),
          f"min_tokens masks stop_token_ids for 3 tokens: {tokens} {why}")
    log("min_tokens masks eos and stop_token_ids")


def check_bad_words(server, vocab):
    hello, s_hello, world, s_world = vocab["hello"], vocab["\u0120hello"], vocab["world"], vocab["\u0120world"]
    steer = {"allowed_token_ids": [hello, s_hello, world], "logit_bias": {str(hello): 100, str(s_hello): 90,
                                                                          str(world): 50}}
    tokens, _, _ = complete(server, steer, max_tokens=4)
    check_equal(tokens, [hello] * 4, "without bad_words")
    tokens, _, _ = complete(server, dict(steer, bad_words=["hello"]), max_tokens=4)
    check_equal(tokens, [world] * 4, "bad_words bans 'hello' and ' hello'")
    # A two-token bad word: " world" may not follow "hello".
    steer = {"allowed_token_ids": [hello, s_world], "logit_bias": {str(s_world): 100, str(hello): 99},
             "presence_penalty": 2.0}
    tokens, _, _ = complete(server, steer, max_tokens=5)
    check_equal(tokens[:3], [s_world, hello, s_world], "without the two-token bad word")
    tokens, _, _ = complete(server, dict(steer, bad_words=["hello world"]), max_tokens=5)
    check_equal(tokens, [s_world] + [hello] * 4, "bad_words 'hello world' bans ' world' after 'hello'")
    log("bad_words honoured (single tokens, with and without the leading space, and a sequence)")


def check_min_p_and_truncation(server):
    steer = {"allowed_token_ids": [1000, 2000, 3000], "logit_bias": {"1000": 10, "2000": 9},
             "temperature": 1.0, "seed": 11}
    loose, _, _ = complete(server, dict(steer, min_p=0.1), max_tokens=30)
    check(2000 in loose and 3000 not in loose, f"min_p 0.1 keeps 2000 (p ~ e^-1 of the best), drops 3000: {loose}")
    strict, _, _ = complete(server, dict(steer, min_p=0.9), max_tokens=30)
    check_equal(strict, [1000] * 30, "min_p 0.9 keeps only the best token")
    _, _, usage = complete(server, {"truncate_prompt_tokens": 10}, prompt=list(range(100, 150)), max_tokens=2)
    check_equal(usage["prompt_tokens"], 10, "truncate_prompt_tokens keeps the last 10 prompt tokens")
    log("min_p and truncate_prompt_tokens honoured")


def check_refusals(server):
    for extra, field in (({"logit_bias": {"200000": 5}}, "logit_bias"),
                         ({"allowed_token_ids": [1, 999999]}, "allowed_token_ids"),
                         ({"repetition_penalty": 0}, "repetition_penalty"),
                         ({"min_p": 2}, "min_p")):
        status, out = post_json(server.port, "/v1/completions", dict({"prompt": "hi", "max_tokens": 2}, **extra))
        check_openai_error(status, out, 400, f"{extra}")
        check(field in out["error"]["message"], f"the error of {extra} names {field}: {out!r}")
    log("out-of-vocabulary token ids and out-of-range values are a 400 naming the field")


def body(args):
    vocab = vocab_of(args.model)
    with Server(args) as server:
        check_bias_and_allowed(server)
        check_penalties(server)
        check_min_tokens(server)
        check_bad_words(server, vocab)
        check_min_p_and_truncation(server)
        check_refusals(server)
        check(server.alive(), "the server is still running")


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
