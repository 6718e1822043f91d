#!/usr/bin/env bash
# W4A16 end to end on the GPU machine: a Llama-3-8B-shape model with random bf16 weights
# (zinfer make-model), the same quantized to GPTQ int4 g128 (make_gptq_model.py), then
# `zinfer-bench latency` at batch 1 / 8 / 16 and `zinfer-bench throughput` for both, in one run
# (docs/benchmarks/quantization.md). Expects build-gpu/bin/{zinfer,zinfer-bench}.
#   OUT=/tmp/q PROMPTS=1000 tools/gpu/quantized.sh
set -u
out=${OUT:-/tmp/zinfer-quantized}
mkdir -p "$out"
bin=build-gpu/bin
source tools/gpu/test_models.sh  # $bf16, $w4
for model in "$bf16" "$w4"; do
  name=$(basename "$model")
  for b in 1 8 16; do
    echo "== $name latency batch $b"
    timeout 300 $bin/zinfer-bench latency --model "$model" --device cuda --input-len 512 --output-len 64 \
      --batch-size $b 2>&1 | grep -v "^\s*$" | tail -4
  done
  echo "== $name throughput ${PROMPTS:-1000} x 512/128"
  timeout 300 $bin/zinfer-bench throughput --model "$model" --device cuda --input-len 512 --output-len 128 \
    --num-prompts "${PROMPTS:-1000}" --max-num-seqs 256 --max-num-batched-tokens 8192 2>&1 | grep -v "^\s*$" | tail -4
done
