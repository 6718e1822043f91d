#!/usr/bin/env bash
# Installs what zinfer needs on Debian 12 (apt-get; only what is missing), fetches the real
# tokenizers of the tests (npm) and the OpenAI Node SDK the API tests use, builds everything (the CUDA backend too when nvcc is present,
# compiled for sm_90a), and makes the small default model in models/default.
#   tools/setup.sh            # build into build/
#   BUILD_DIR=... JOBS=... tools/setup.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

packages=(build-essential cmake ninja-build ccache pkg-config git
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libboost-dev libboost-fiber-dev libboost-context-dev
  libspdlog-dev libfmt-dev libtoml11-dev nlohmann-json3-dev libpcre2-dev libutf8proc-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-zmq python3-msgpack python3-numpy python3-jsonschema python3-jinja2 gnuplot-nox curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from Debian or from a Node.js installed otherwise: only ask apt when there is none.
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

tools/fetch-tokenizers.sh
# The OpenAI Node SDK for the API tests (tests/node; versions pinned by its package-lock.json).
if [ ! -d tests/node/node_modules/openai ]; then
  npm ci --prefix tests/node --no-audit --no-fund --loglevel=error
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" -j "$jobs"

if [ ! -f models/default/model.safetensors ]; then
  "$build/bin/zinfer" make-model --out models/default --tokenizer tests/data/tokenizers/qwen3
fi
echo "setup: built in $build/; default model in models/default (random weights: see its README.md)"
