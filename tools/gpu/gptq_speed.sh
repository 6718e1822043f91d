#!/usr/bin/env bash
# The gptq-speed-test workload of issue 18 on the GPU machine: 11 prompts x 8,000 tokens in / 16
# out through `zinfer-bench throughput`, the seconds it takes at max_num_batched_tokens 1,024,
# 512, 256, 128, 64 and 32 (chunked prefill: the smaller the chunk, the more steps of few rows,
# where a W4 kernel fast only at one row collapses), then 11 x 8,000 / 512 at 1,024; for the
# Llama-3-8B-shape model in bf16, its GPTQ int4 g128 copy and online FP8 (--quantization fp8), one
# after the other in one run. A table of seconds prints last (docs/benchmarks/quantization.md).
# Expects build-gpu/bin/{zinfer,zinfer-bench}.
#   OUT=/tmp/g tools/gpu/gptq_speed.sh
# Knobs: CHUNKS ("1024 512 256 128 64 32"), LONG (1: the 512-out row too; 0: not), MODEL / W4_MODEL
# (folders, made when missing).
set -u
out=${OUT:-/tmp/zinfer-gptq-speed}
mkdir -p "$out"
source tools/gpu/test_models.sh  # $bf16, $w4
bin=build-gpu/bin
chunks=${CHUNKS:-"1024 512 256 128 64 32"}
run() {  # name, model, extra flags, output length, chunk -> seconds (or "failed")
  local log="$out/$1_out$4_chunk$5.log"
  timeout 900 $bin/zinfer-bench throughput --model "$2" --device cuda $3 --input-len 8000 --output-len "$4" \
    --num-prompts 11 --max-num-seqs 16 --max-num-batched-tokens "$5" > "$log" 2>&1
  local s
  s=$(sed -n 's/^  elapsed \([0-9.]*\) s,.*/\1/p' "$log")
  echo "${s:-failed}"
}
printf "%-6s" "chunk" > "$out/table.txt"
for name in bf16 w4a16 fp8; do printf " %10s" "$name" >> "$out/table.txt"; done
echo >> "$out/table.txt"
for c in $chunks; do
  printf "%-6s" "$c" >> "$out/table.txt"
  printf " %10s" "$(run bf16 "$bf16" "" 16 "$c")" "$(run w4a16 "$w4" "" 16 "$c")" \
    "$(run fp8 "$bf16" "--quantization fp8" 16 "$c")" >> "$out/table.txt"
  echo >> "$out/table.txt"
done
if [ "${LONG:-1}" = 1 ]; then
  printf "%-6s" "512out" >> "$out/table.txt"
  printf " %10s" "$(run bf16 "$bf16" "" 512 1024)" "$(run w4a16 "$w4" "" 512 1024)" \
    "$(run fp8 "$bf16" "--quantization fp8" 512 1024)" >> "$out/table.txt"
  echo >> "$out/table.txt"
fi
echo "--- seconds, 11 x 8,000 in / 16 out by max_num_batched_tokens; last row: / 512 out at 1,024"
cat "$out/table.txt"
