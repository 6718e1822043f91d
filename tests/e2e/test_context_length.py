"""e2e: the context length ([model] max_model_len) end to end. A request that fills the context
exactly is served to its last token; one token more is refused with 400; a chat request without
max_tokens runs until the context is full (docs/protocol.md: "max_completion_tokens or max_tokens
(default: the context length)")."""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Server, check_equal, check_openai_error, log, main_wrapper, parse_args,  # noqa: E402
                        post_json, wait_idle)

MAX_MODEL_LEN = 96
PROMPT_IDS = list(range(1000, 1032))  # 32 tokens


def body(args):
    with Server(args, model={"max_model_len": MAX_MODEL_LEN}) as server:
        room = MAX_MODEL_LEN - len(PROMPT_IDS)
        status, out = post_json(server.port, "/v1/completions", {
            "prompt": PROMPT_IDS, "max_tokens": room, "temperature": 0, "ignore_eos": True})
        check_equal(status, 200, f"a request that fills the context exactly ({out!r})")
        check_equal(out["usage"]["completion_tokens"], room, "completion tokens filling the context")
        check_equal(out["choices"][0]["finish_reason"], "length", "finish_reason at the context length")
        log(f"{len(PROMPT_IDS)} prompt + {room} generated = the context of {MAX_MODEL_LEN}: served")

        status, out = post_json(server.port, "/v1/completions", {
            "prompt": PROMPT_IDS, "max_tokens": room + 1, "temperature": 0, "ignore_eos": True})
        check_openai_error(status, out, 400, "one token over the context")
        log(f"one token more: 400 {out['error']['message'][:90]!r}")

        status, out = post_json(server.port, "/v1/chat/completions", {
            "messages": [{"role": "user", "content": "hi there"}], "temperature": 0, "ignore_eos": True})
        check_equal(status, 200, f"chat without max_tokens ({out!r})")
        prompt_tokens = out["usage"]["prompt_tokens"]
        check_equal(out["usage"]["completion_tokens"], MAX_MODEL_LEN - prompt_tokens,
                    f"chat without max_tokens: completion tokens ({prompt_tokens} prompt tokens, context "
                    f"{MAX_MODEL_LEN}; the default is the rest of the context)")
        check_equal(out["choices"][0]["finish_reason"], "length", "chat without max_tokens: finish_reason")
        log("chat without max_tokens: runs to the end of the context")
        wait_idle(server.port)


if __name__ == "__main__":
    ARGS = parse_args(__doc__)
    main_wrapper(lambda: body(ARGS), ARGS.timeout)
