"""e2e fixture: writes the default model (zinfer make-model) into the build folder unless a
complete one is already there, so that the e2e tests do not depend on the checkout's models/.
With a TOKENIZER folder, the same random model on that tokenizer (e.g. Llama-3's, for the
Llama-3 chat template and tool parser)."""

import os
import subprocess
import sys

NEEDED = ("config.json", "model.safetensors", "tokenizer.json")


def main():
    if len(sys.argv) not in (3, 4):
        print("usage: make_model.py ZINFER OUT_DIR [TOKENIZER]", file=sys.stderr)
        return 2
    zinfer, out = sys.argv[1], sys.argv[2]
    tokenizer = ["--tokenizer", sys.argv[3]] if len(sys.argv) == 4 else []
    if all(os.path.isfile(os.path.join(out, f)) for f in NEEDED):
        print(f"{out}: already has {', '.join(NEEDED)}")
        return 0
    return subprocess.run([zinfer, "make-model", "--out", out] + tokenizer, timeout=600).returncode


if __name__ == "__main__":
    sys.exit(main())
