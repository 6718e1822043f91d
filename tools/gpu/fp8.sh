#!/usr/bin/env bash
# FP8 W8A8 end to end on the GPU machine: a Llama-3-8B-shape model with random bf16 weights
# (zinfer make-model), served as it is and with online FP8 (`--quantization fp8`, per-channel
# weight scales, dynamic per-token activation scales), `zinfer-bench latency` at batch 1 / 8 / 16,
# a prefill of 4,096 tokens, and `zinfer-bench throughput`, both in one run
# (docs/benchmarks/quantization.md). Expects build-gpu/bin/{zinfer,zinfer-bench}.
#   OUT=/tmp/f PROMPTS=1000 tools/gpu/fp8.sh
set -u
out=${OUT:-/tmp/zinfer-fp8}
mkdir -p "$out"
model=${MODEL:-/tmp/llama3-8b-shape}
bin=build-gpu/bin
if [ ! -f "$model/config.json" ]; then
  $bin/zinfer make-model --config tests/data/configs/llama-3-8b/config.json --out "$model" \
    --tokenizer tests/data/tokenizers/llama3 > "$out/make-model.log" 2>&1 || { cat "$out/make-model.log"; exit 1; }
fi
for quant in none fp8; do
  for b in 1 8 16; do
    echo "== $quant latency batch $b"
    timeout 300 $bin/zinfer-bench latency --model "$model" --device cuda --quantization $quant --input-len 512 \
      --output-len 64 --batch-size $b 2>&1 | grep -v "^\s*$" | tail -4
  done
  echo "== $quant prefill of 4096 tokens"
  timeout 300 $bin/zinfer-bench latency --model "$model" --device cuda --quantization $quant --input-len 4096 \
    --output-len 8 --batch-size 1 2>&1 | grep -v "^\s*$" | tail -4
  echo "== $quant throughput ${PROMPTS:-1000} x 512/128"
  timeout 300 $bin/zinfer-bench throughput --model "$model" --device cuda --quantization $quant --input-len 512 \
    --output-len 128 --num-prompts "${PROMPTS:-1000}" --max-num-seqs 256 --max-num-batched-tokens 8192 2>&1 |
    grep -v "^\s*$" | tail -4
done
