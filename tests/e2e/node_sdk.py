"""Runs one Node script of tests/node against a zinfer server started here: the API tests that use
the official OpenAI Node SDK (npm `openai`) as the client, as a user would. The script gets the
server's base URL, model name and API key in its environment (ZINFER_BASE_URL, ZINFER_MODEL,
ZINFER_API_KEY, ZINFER_PORT, ZINFER_MODEL_DIR) and exits non-zero on a failed check.

  node_sdk.py ... --script NAME.mjs [--server-json '{"key": value}'] [--model-json ...] [--scheduler-json ...]

tests/node/node_modules comes from `npm ci` in tools/setup.sh (package-lock.json pins the SDK)."""

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common  # noqa: E402
from e2e_common import Server, TestFailure, check, log, main_wrapper  # noqa: E402


def parse():
    extra = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    extra.add_argument("--script", required=True, help="file name under tests/node")
    for section in ("server", "model", "scheduler", "cache", "tokenizer"):
        extra.add_argument(f"--{section}-json", default="", help=f"extra [{section}] settings as JSON")
    extra.add_argument("--api-key", default="", help="serve with this API key (the script gets it)")
    mine, rest = extra.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    return mine, e2e_common.parse_args(__doc__)


def main(mine, args):
    node = shutil.which("node")
    check(node is not None, "node is not installed (tools/setup.sh installs nodejs and npm)")
    node_dir = os.path.join(args.source_dir, "tests", "node")
    if not os.path.isdir(os.path.join(node_dir, "node_modules", "openai")):
        raise TestFailure(f"{node_dir}/node_modules lacks the OpenAI SDK: run `npm ci --prefix {node_dir}` "
                          "(tools/setup.sh does)")
    sections = {s: json.loads(getattr(mine, f"{s}_json")) if getattr(mine, f"{s}_json") else None
                for s in ("server", "model", "scheduler", "cache", "tokenizer")}
    if mine.api_key:
        sections["server"] = dict(sections["server"] or {}, api_keys=[mine.api_key])
    with Server(args, **sections) as server:
        env = dict(os.environ, ZINFER_BASE_URL=f"http://{e2e_common.HOST}:{server.port}/v1",
                   ZINFER_PORT=str(server.port), ZINFER_MODEL=server.model_name,
                   ZINFER_MODEL_DIR=os.path.abspath(args.model), ZINFER_API_KEY=mine.api_key or "none")
        log(f"node {mine.script} against port {server.port}")
        result = subprocess.run([node, os.path.join(node_dir, mine.script)], env=env, cwd=node_dir,
                                timeout=max(30, args.timeout - 30))
        check(result.returncode == 0, f"{mine.script} exited with {result.returncode}")


if __name__ == "__main__":
    _mine, _args = parse()
    main_wrapper(lambda: main(_mine, _args), timeout_s=_args.timeout)
