#!/usr/bin/env bash
# Tensor parallelism on a multi-GPU machine in one call: build, the GPU tests (TP against one GPU),
# the transformers parity script at TP = 2, then what one all-reduce costs (NCCL against the
# residual exchange), Llama-3-8B shapes at TP = 1, 2 (and 4 where the machine has 4 GPUs), same
# process kind, same run, TP = 2 with NCCL's decode all-reduce for comparison, and a
# Llama-3-70B-shape model at the largest TP the GPUs' memory allows. Logs to /tmp/zinfer-tp, copied to $OUT when set; a table prints last.
#   tools/gpu/tensor_parallel.sh
# Knobs: STAGES ("build tests parity bench big"), PROMPTS (throughput prompts, 1000), CMAKE_ARGS
# (docs/gpu-machine.md), BIG_TP (the 70B-shape model's TP size; default: 4 with 4 GPUs, else 2).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=/tmp/zinfer-tp  # the logs; $OUT (if set) gets the summary and the main logs at the end
mkdir -p "$out"
: > "$out/summary.txt"
stages=${STAGES:-"build tests parity bench big"}
has() { [[ " $stages " == *" $1 "* ]]; }
[ -f .gpu/setup.sh ] && source .gpu/setup.sh
export NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=name,memory.total --format=csv > "$out/gpu.txt" 2>&1
nvidia-smi topo -m > "$out/topo.txt" 2>&1
echo "GPUs: $gpus" | tee -a "$out/summary.txt"

if has build; then
  start=$SECONDS
  if cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} > "$out/cmake.log" 2>&1 &&
     ninja -C build-gpu -j"$(nproc)" zinfer_cuda_tests zinfer_model_tests zinfer-cuda-bench zinfer-cuda-logits \
       > "$out/build.log" 2>&1; then
    echo "build ok ($((SECONDS - start)) s)" | tee -a "$out/summary.txt"
  else
    echo "build FAILED" | tee -a "$out/summary.txt"
    tail -60 "$out/cmake.log" "$out/build.log"
    exit 1
  fi
fi

if has tests; then
  timeout 240 build-gpu/tests/cuda/zinfer_cuda_tests --gtest_filter='*TensorParallel*:CudaEmbedding*' \
    > "$out/tests_tp.log" 2>&1
  echo "cuda TP tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/tests_tp.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
  timeout 200 build-gpu/tests/model/zinfer_model_tests --gtest_filter='*TensorParallel*:RankGroup*:TensorSlice*' \
    > "$out/tests_cpu_tp.log" 2>&1
  echo "cpu TP tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/tests_cpu_tp.log" | tr '\n' ' ')" | tee -a "$out/summary.txt"
fi

if has parity; then
  timeout 240 python3 tools/fixtures/cuda_parity.py --zinfer-logits build-gpu/bin/zinfer-cuda-logits \
    --out "$out/parity_tp2" --big-layers 8 --tensor-parallel-size 2 > "$out/parity_tp2.log" 2>&1
  echo "parity tp2 rc=$?" | tee -a "$out/summary.txt"
  grep '^PARITY' "$out/parity_tp2.log" | tee -a "$out/summary.txt"
fi

if has bench; then
  # What one all-reduce costs: NCCL's kernel against the residual exchange in the GEMV.
  timeout 60 build-gpu/bin/zinfer-cuda-bench exchange --tensor-parallel-size 2 > "$out/bench_exchange.log" 2>&1
  echo "exchange tp2 rc=$?" | tee -a "$out/summary.txt"
  grep -E 'RESULT exchange' "$out/bench_exchange.log" | tee -a "$out/summary.txt"
  for tp in 1 2 4; do
    [ "$tp" -le "$gpus" ] || continue
    timeout 240 build-gpu/bin/zinfer-cuda-bench model --tensor-parallel-size "$tp" --prompts "${PROMPTS:-1000}" \
      > "$out/bench_8b_tp$tp.log" 2>&1
    echo "8B tp$tp rc=$?" | tee -a "$out/summary.txt"
    grep -E 'model:|decode_b1|prefill_4096|throughput' "$out/bench_8b_tp$tp.log" | tee -a "$out/summary.txt"
  done
  # The decode steps' all-reduce through NCCL, for comparison (decode figures only).
  timeout 120 build-gpu/bin/zinfer-cuda-bench model --tensor-parallel-size 2 --all-reduce nccl --prompts 0 \
    > "$out/bench_8b_tp2_nccl.log" 2>&1
  echo "8B tp2 NCCL all-reduce rc=$?" | tee -a "$out/summary.txt"
  grep -E 'model:|decode_b1' "$out/bench_8b_tp2_nccl.log" | tee -a "$out/summary.txt"
fi

if has big; then
  big_tp=${BIG_TP:-$([ "$gpus" -ge 4 ] && echo 4 || echo 2)}
  timeout 300 build-gpu/bin/zinfer-cuda-bench model --shape 70b --tensor-parallel-size "$big_tp" \
    --prompts "${BIG_PROMPTS:-300}" > "$out/bench_70b_tp$big_tp.log" 2>&1
  echo "70B tp$big_tp rc=$?" | tee -a "$out/summary.txt"
  grep -E 'model:|decode_b1|prefill_4096|throughput|error' "$out/bench_70b_tp$big_tp.log" | tee -a "$out/summary.txt"
fi
echo "--- summary"; cat "$out/summary.txt"
if [ -n "${OUT:-}" ]; then
  cp "$out"/summary.txt "$out"/*.log "$OUT"/ 2>/dev/null
  rm -f "$OUT"/cmake.log
fi
