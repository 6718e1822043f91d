#!/usr/bin/env bash
# A change's speed against the commit before it, on one GPU in one call: builds BASE_TAR (a tree
# from `git archive --prefix=base/ COMMIT`) beside this checkout and runs `zinfer-cuda-bench model`
# on both, alternating, ROUNDS times, so that the machine's drift falls on both sides alike.
#   git archive --format=tar --prefix=base/ COMMIT > .base/base.tar   # on the development machine
#   STAGES="build" tools/gpu/before_after.sh; STAGES="bench" tools/gpu/before_after.sh
# Knobs: BASE_TAR (.base/base.tar), ROUNDS (2), LAYERS (32), PROMPTS (1000), CMAKE_ARGS. Logs go to $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/zinfer-before-after}
mkdir -p "$out"
stages=${STAGES:-"build bench"}
base_root=/tmp/zinfer-base
has() { [[ " $stages " == *" $1 "* ]]; }

if has build; then
  rm -rf "$base_root" && mkdir -p "$base_root" && tar xf "${BASE_TAR:-.base/base.tar}" -C "$base_root"
  (cd "$base_root/base" && cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} > "$out/base-cmake.log" 2>&1 &&
     ninja -C build-gpu -j8 zinfer-cuda-bench zinfer zinfer-bench > "$out/base-build.log" 2>&1) &
  base_build=$!
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} > "$out/cmake.log" 2>&1 &&
    ninja -C build-gpu -j8 zinfer_cuda_tests zinfer-cuda-bench zinfer-cuda-logits zinfer zinfer-bench > "$out/build.log" 2>&1
  echo "build: rc $?"; tail -5 "$out/build.log" | grep -E "error|FAILED" -A3
  wait $base_build
  echo "base build: rc $?"; tail -5 "$out/base-build.log" | grep -E "error|FAILED" -A3
fi

if has bench; then
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for side in base new; do
      bin=build-gpu/bin
      [ "$side" = base ] && bin=$base_root/base/build-gpu/bin
      timeout 300 "$bin/zinfer-cuda-bench" model --layers "${LAYERS:-32}" --prompts "${PROMPTS:-1000}" \
        > "$out/bench-$side-$round.log" 2>&1
      echo "bench $side round $round: rc $?"
    done
  done
  printf '%-44s %s\n' "figure" "base / new (per round)"
  for name in $(grep -h '^RESULT' "$out"/bench-new-1.log | awk '{print $2}'); do
    printf '%-44s' "$name"
    for round in $(seq 1 "${ROUNDS:-2}"); do
      b=$(grep -h "^RESULT $name " "$out/bench-base-$round.log" | awk '{print $3}')
      n=$(grep -h "^RESULT $name " "$out/bench-new-$round.log" | awk '{print $3}')
      printf ' %s / %s' "$b" "$n"
    done
    echo
  done
fi
