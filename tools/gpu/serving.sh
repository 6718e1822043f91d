#!/usr/bin/env bash
# The serving figures of docs/benchmarks/serving.md, in one call on the GPU machine: a model with
# Llama-3-8B's shapes and random bf16 weights (zinfer make-model --config), `zinfer serve` on the
# GPU, `zinfer-bench serve` at each request rate (synthetic-chat), then the prefill/decode sweeps.
# Results (JSON, CSV, PNG, logs) go to $OUT (default /tmp/zinfer-serving).
#   tools/gpu/serving.sh                     # expects build-gpu/bin/{zinfer,zinfer-bench}
# Knobs: PROMPTS (requests per rate, 1000), RATES ("1 2 5 8 inf"), GPU (sweep's table entry, h200),
#        MODEL (folder; made when missing), SWEEP (1 = run the sweeps), PORT (HTTP, 8000) and
#        ZMQ_PORT (5555), so that two servers can run side by side on a machine of two GPUs (one
#        per CUDA_VISIBLE_DEVICES), each with its own rates.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/zinfer-serving}
mkdir -p "$out"
bin=build-gpu/bin
model=${MODEL:-/tmp/llama3-8b-shape}
prompts=${PROMPTS:-1000}
rates=${RATES:-"1 2 5 8 inf"}
gpu=${GPU:-h200}
port=${PORT:-8000}
zmq_port=${ZMQ_PORT:-5555}

if [ ! -f "$model/model.safetensors" ]; then
  start=$SECONDS
  $bin/zinfer make-model --config tests/data/configs/llama-3-8b/config.json --out "$model" \
    --tokenizer tests/data/tokenizers/llama3 > "$out/make-model.log" 2>&1 || { cat "$out/make-model.log"; exit 1; }
  echo "model written in $((SECONDS - start)) s"
fi

cat > "$out/serve.toml" <<TOML
[server]
port = $port
zmq_endpoint = "tcp://127.0.0.1:$zmq_port"
served_model_name = "llama3-8b-shape"
[model]
path = "$model"
device = "cuda"
[scheduler]
max_num_seqs = 256
max_num_batched_tokens = 8192
[cache]
gpu_memory_utilization = 0.9
TOML
$bin/zinfer serve --config "$out/serve.toml" > "$out/server.log" 2>&1 &
server=$!
for _ in $(seq 1 240); do
  curl -sf localhost:$port/health > /dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { echo "server died"; tail -30 "$out/server.log"; exit 1; }
  sleep 1
done
echo "server ready: $(grep -m1 'KV blocks' "$out/server.log")"
for rate in $rates; do
  limit=900  # a Poisson run of N requests at rate r lasts about N / r seconds
  [ "$rate" != inf ] && limit=$(awk -v n="$prompts" -v r="$rate" 'BEGIN { t = int(1.3 * n / r) + 300; print (t > 900 ? t : 900) }')
  timeout "$limit" $bin/zinfer-bench serve --backend openai --port "$port" --model "$model" \
    --served-model-name llama3-8b-shape --dataset-name synthetic-chat --num-prompts "$prompts" \
    --request-rate "$rate" --seed 0 --metric-percentiles 50,90,99 --disable-tqdm \
    --save-result --result-dir "$out" --result-filename "serve-rate-$rate.json" \
    --metadata gpu="$gpu" rate="$rate" cuda_device="${CUDA_VISIBLE_DEVICES:-0}" > "$out/serve-rate-$rate.txt" 2>&1
  echo "rate $rate: rc $?"; grep -E "Successful|Request throughput|Output token|Median TTFT|P99 TTFT|Median TPOT|P99 TPOT" "$out/serve-rate-$rate.txt"
done
curl -s localhost:$port/metrics > "$out/metrics.txt"
kill $server; wait $server 2>/dev/null
if [ "${SWEEP:-1}" = 1 ]; then
  timeout 600 $bin/zinfer-bench sweep --model "$model" --device cuda --gpu "$gpu" --repeat 5 --out-dir "$out/sweep" \
    > "$out/sweep.txt" 2>&1
  echo "sweep: rc $?"; tail -30 "$out/sweep.txt"
fi
