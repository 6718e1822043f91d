#!/usr/bin/env bash
# Runs the whole test suite of a build made by tools/setup.sh. GPU tests (label gpu) say
# "skipped: no CUDA device" on a machine without one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
cd "$root"
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-2}" --timeout 900
