#!/usr/bin/env bash
# The request-rate table of docs/benchmarks/serving.md on a machine of two GPUs, in about 17
# minutes instead of 31: rate 1 alone (1,000 Poisson arrivals at 1/s last ~1,000 s) on GPU 0, and
# rates 2, 5, 8 and inf one after the other on GPU 1, each half a `zinfer serve` of its own
# (tools/gpu/serving.sh) on the same model folder. Both halves run detached (setsid), so that the
# run outlives the 10-minute command limit of the GPU machine; the call returns at once.
#   tools/gpu/serving_pair.sh                # expects build-gpu/bin/{zinfer,zinfer-bench}
# Results land in $DIR/a (rate 1) and $DIR/b (the others) (default /tmp/zinfer-serving-pair);
# $DIR/a/DONE and $DIR/b/DONE appear when each half ends. Knobs as in serving.sh (PROMPTS, MODEL).
# After its rates, half b runs AFTER_B (a command, e.g. the GPU tests) on GPU 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
dir=${DIR:-/tmp/zinfer-serving-pair}
model=${MODEL:-/tmp/llama3-8b-shape}
mkdir -p "$dir/a" "$dir/b"
if [ ! -f "$model/model.safetensors" ]; then
  start=$SECONDS
  build-gpu/bin/zinfer make-model --config tests/data/configs/llama-3-8b/config.json --out "$model" \
    --tokenizer tests/data/tokenizers/llama3 > "$dir/make-model.log" 2>&1 || { cat "$dir/make-model.log"; exit 1; }
  echo "model written in $((SECONDS - start)) s"
fi
export MODEL=$model SWEEP=0
CUDA_VISIBLE_DEVICES=0 PORT=8000 ZMQ_PORT=5555 RATES="1" OUT="$dir/a" \
  setsid bash -c 'tools/gpu/serving.sh > "$OUT/run.log" 2>&1; touch "$OUT/DONE"' < /dev/null > /dev/null 2>&1 &
CUDA_VISIBLE_DEVICES=1 PORT=8001 ZMQ_PORT=5556 RATES="2 5 8 inf" OUT="$dir/b" AFTER_B="${AFTER_B:-true}" \
  setsid bash -c 'tools/gpu/serving.sh > "$OUT/run.log" 2>&1; eval "$AFTER_B" > "$OUT/after.log" 2>&1; touch "$OUT/DONE"' \
  < /dev/null > /dev/null 2>&1 &
echo "started: rate 1 on GPU 0 -> $dir/a, rates 2 5 8 inf on GPU 1 -> $dir/b"
