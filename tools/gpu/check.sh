#!/usr/bin/env bash
# The CUDA backend in one call on the GPU machine: build its targets, run the GPU tests, the
# benchmarks (ceilings, attention kernels, Llama-3-8B-shape latency and throughput) and the
# transformers parity script; logs go to $OUT (default /tmp/zinfer-gpu-check), a table prints last.
#   tools/gpu/check.sh            # everything
#   STAGES="build tests" tools/gpu/check.sh
#   STAGES="build actors" tools/gpu/check.sh   # + zinfer-bench throughput/latency through the actors
# Knobs: LAYERS (bench model layers, 32), PROMPTS (throughput prompts, 1000), BIG_LAYERS (parity
# model with Llama-3-8B shapes, 8), T_TESTS / T_BENCH / T_PARITY / T_ACTORS (seconds per stage),
# MODEL (the actors stage's Llama-3-8B-shape folder, made when missing; /tmp/llama3-8b-shape),
# CMAKE_ARGS (extra cmake arguments: docs/gpu-machine.md).
# The actors stage needs the real Llama-3 tokenizer in tests/data/tokenizers/llama3 (carry it).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/zinfer-gpu-check}
mkdir -p "$out"
stages=${STAGES:-"build tests bench parity"}
[ -f .gpu/setup.sh ] && source .gpu/setup.sh
status_build=skipped status_tests=skipped status_bench=skipped status_parity=skipped status_actors=skipped

has() { [[ " $stages " == *" $1 "* ]]; }

if has build; then
  start=$SECONDS
  if cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} > "$out/cmake.log" 2>&1 &&
     ninja -C build-gpu -j16 zinfer_cuda_tests zinfer-cuda-bench zinfer-cuda-logits \
      $(has actors && echo zinfer zinfer-bench) > "$out/build.log" 2>&1; then
    status_build="ok ($((SECONDS - start)) s)"
  else
    status_build=FAILED
    tail -40 "$out/cmake.log" "$out/build.log"
  fi
fi
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1

if has tests && [ -x build-gpu/tests/cuda/zinfer_cuda_tests ]; then
  start=$SECONDS
  timeout "${T_TESTS:-180}" build-gpu/tests/cuda/zinfer_cuda_tests > "$out/tests.log" 2>&1
  rc=$?
  passed=$(grep -c '^\[       OK \]' "$out/tests.log")
  failed=$(grep -c '^\[  FAILED  \].*(' "$out/tests.log")
  status_tests="rc $rc, $passed passed, $failed failed ($((SECONDS - start)) s)"
fi

if has bench && [ -x build-gpu/bin/zinfer-cuda-bench ]; then
  start=$SECONDS
  timeout "${T_BENCH:-240}" build-gpu/bin/zinfer-cuda-bench all --layers "${LAYERS:-32}" --prompts "${PROMPTS:-1000}" \
    > "$out/bench.log" 2>&1
  status_bench="rc $? ($((SECONDS - start)) s)"
fi

if has parity && [ -x build-gpu/bin/zinfer-cuda-logits ]; then
  start=$SECONDS
  models=()
  for d in tests/data/models/*/; do [ -f "$d/config.json" ] && models+=(--model "$d"); done
  PYTHONUNBUFFERED=1 timeout "${T_PARITY:-240}" python3 tools/fixtures/cuda_parity.py \
    --zinfer-logits build-gpu/bin/zinfer-cuda-logits --out "$out" --big-layers "${BIG_LAYERS:-8}" "${models[@]}" \
    > "$out/parity.log" 2>&1
  status_parity="rc $? ($((SECONDS - start)) s)"
fi

if has actors && [ -x build-gpu/bin/zinfer-bench ]; then
  # The issue's offline workload and batch-1 latency through the real actors (docs/benchmarks/serving.md).
  start=$SECONDS
  model=${MODEL:-/tmp/llama3-8b-shape}
  [ -f "$model/model.safetensors" ] || build-gpu/bin/zinfer make-model --config tests/data/configs/llama-3-8b/config.json \
    --out "$model" --tokenizer tests/data/tokenizers/llama3 > "$out/make-model.log" 2>&1
  timeout "${T_ACTORS:-300}" bash -c "build-gpu/bin/zinfer-bench throughput --model $model --device cuda --input-len 512 \
      --output-len 128 --num-prompts ${PROMPTS:-1000} --max-num-seqs 256 --max-num-batched-tokens 8192 &&
    build-gpu/bin/zinfer-bench latency --model $model --device cuda --input-len 1024 --output-len 64 --batch-size 1" \
    > "$out/actors.log" 2>&1
  status_actors="rc $? ($((SECONDS - start)) s)"
fi

echo
echo "== failures =="
grep -E '^\[  FAILED  \]|Failure|error' "$out/tests.log" 2>/dev/null | head -30
grep -E 'Error|error' "$out/bench.log" 2>/dev/null | head -5
echo "== results ($(head -2 "$out/gpu.txt" | tail -1)) =="
grep -h '^RESULT' "$out/bench.log" 2>/dev/null | awk '{printf "%-44s %10s %-8s ceiling %-8s ratio %s\n", $2, $3, $4, $6, $8}'
grep -h '^PARITY' "$out/parity.log" 2>/dev/null
tail -12 "$out/actors.log" 2>/dev/null
echo "build: $status_build | tests: $status_tests | bench: $status_bench | parity: $status_parity | actors: $status_actors"
