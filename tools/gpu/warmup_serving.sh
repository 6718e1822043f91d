#!/usr/bin/env bash
# Start-up and live-path figures of the CUDA backend in one call on the GPU machine (issue 17,
# docs/benchmarks/serving.md): a Llama-3-8B-shape model (random bf16 weights), the time from
# `zinfer serve` to a healthy /health with a cold and then a warm cuBLASLt tuning cache, and
# `zinfer-bench serve` at a steady request rate (random 512-token prompts, 128 tokens out) with
# TTFT and ITL percentiles. With BASE_BIN (another build's bin/ folder) the serve run is repeated
# on that build in the same call, for a before/after on one GPU.
#   tools/gpu/warmup_serving.sh            # expects build-gpu/bin/{zinfer,zinfer-bench}
# Knobs: MODEL (folder, made when missing), RATE (4), PROMPTS (200), PORT (8000), BASE_BIN,
# THRESHOLDS (the [scheduler] long_prefill_token_threshold values to serve with, "0").
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/zinfer-warmup}
mkdir -p "$out"
bin=${BIN:-build-gpu/bin}
model=${MODEL:-/tmp/llama3-8b-shape}
rate=${RATE:-4}
prompts=${PROMPTS:-200}
port=${PORT:-8000}
cache_home=$out/xdg-cache  # the tuning cache of these runs only

if [ ! -f "$model/model.safetensors" ]; then
  start=$SECONDS
  $bin/zinfer make-model --config tests/data/configs/llama-3-8b/config.json --out "$model" \
    --tokenizer tests/data/tokenizers/llama3 > "$out/make-model.log" 2>&1 || { cat "$out/make-model.log"; exit 1; }
  echo "model written in $((SECONDS - start)) s"
fi
write_toml() {  # $1: the file, $2: long_prefill_token_threshold ("" = leave the key out)
  cat > "$1" <<TOML
[server]
port = $port
zmq_endpoint = ""
served_model_name = "llama3-8b-shape"
[model]
path = "$model"
device = "cuda"
[scheduler]
max_num_seqs = 256
max_num_batched_tokens = 8192
${2:+long_prefill_token_threshold = $2}
[cache]
gpu_memory_utilization = 0.9
TOML
}

server=""
ready_s=""
start_server() {  # $1: bin folder, $2: log name, $3: config; sets server (pid) and ready_s (seconds to healthy)
  local t0=$(date +%s.%N)
  XDG_CACHE_HOME=$cache_home "$1/zinfer" serve --config "$3" > "$out/$2.log" 2>&1 &
  server=$!
  for _ in $(seq 1 1200); do
    curl -sf localhost:$port/health > /dev/null 2>&1 && break
    kill -0 $server 2>/dev/null || { echo "server died"; tail -30 "$out/$2.log"; return 1; }
    sleep 0.1
  done
  ready_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}
stop_server() {  # and wait until the port is free for the next server
  kill $server; wait $server 2>/dev/null
  for _ in $(seq 1 100); do curl -sf localhost:$port/health > /dev/null 2>&1 || break; sleep 0.1; done
}
serve_run() {  # $1: tag
  timeout 600 $bin/zinfer-bench serve --backend openai --port "$port" --model "$model" \
    --served-model-name llama3-8b-shape --dataset-name random --random-input-len 512 --random-output-len 128 \
    --num-prompts "$prompts" --request-rate "$rate" --seed 0 --percentile-metrics ttft,tpot,itl,event_gap,e2el \
    --metric-percentiles 50,90,99 --disable-tqdm --save-result --result-dir "$out" \
    --result-filename "serve-$1.json" > "$out/serve-$1.txt" 2>&1
  echo "serve $1 (rate $rate, $prompts prompts): rc $?"
  grep -E "Successful|Median TTFT|P99 TTFT|Median ITL|P99 ITL|Median TPOT|P99 TPOT|Event Gap" "$out/serve-$1.txt"
}

rm -rf "$cache_home"
write_toml "$out/serve.toml" ""
start_server "$bin" server-cold "$out/serve.toml" && echo "start-up, cold tuning cache: $ready_s s to healthy"
grep -h "zinfer cuda:" "$out/server-cold.log"
stop_server
for threshold in ${THRESHOLDS:-0}; do
  write_toml "$out/serve-$threshold.toml" "$threshold"
  start_server "$bin" "server-$threshold" "$out/serve-$threshold.toml" &&
    echo "start-up, warm tuning cache: $ready_s s to healthy (long_prefill_token_threshold $threshold)"
  grep -h "warm-up" "$out/server-$threshold.log"
  serve_run "new-threshold-$threshold"
  stop_server
done
if [ -n "${BASE_BIN:-}" ]; then
  start_server "$BASE_BIN" server-base "$out/serve.toml" && echo "base start-up: $ready_s s to healthy"
  serve_run base
  stop_server
fi
