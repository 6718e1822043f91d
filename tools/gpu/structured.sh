#!/usr/bin/env bash
# Issue 19's figures in one call on the GPU machine (docs/benchmarks/structured.md):
#  1. zinfer-grammar-bench on the Llama-3 and Qwen3 vocabularies (compile time, mask time per
#     step: the JSON grammar, a 30-property schema, tools/gpu/data/bench_schema.json), on this
#     machine's otherwise idle CPU;
#  2. TPOT of 64 concurrent requests against a Llama-3-8B-shape model (random bf16 weights), once
#     free and once each under response_format json_schema (bench_schema.json), same server, same
#     run: the ratio is the cost of making, uploading and applying the masks.
#   tools/gpu/structured.sh                  # builds build-gpu/ when its binaries are missing
# Knobs: PROMPTS (requests per run, 512), CONCURRENCY (64), MODEL (folder; made when missing),
# CMAKE_ARGS (docs/gpu-machine.md), OUT (logs and results, default /tmp/zinfer-structured).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/zinfer-structured}
mkdir -p "$out"
[ -f .gpu/setup.sh ] && source .gpu/setup.sh
bin=build-gpu/bin
model=${MODEL:-/tmp/llama3-8b-shape}
prompts=${PROMPTS:-512}
concurrency=${CONCURRENCY:-64}
port=${PORT:-8000}
schema=tools/gpu/data/bench_schema.json

if [ ! -x $bin/zinfer ] || [ ! -x $bin/zinfer-bench ] || [ ! -x $bin/zinfer-grammar-bench ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} > "$out/cmake.log" 2>&1 &&
    ninja -C build-gpu -j"$(nproc)" zinfer zinfer-bench zinfer-grammar-bench > "$out/build.log" 2>&1 ||
    { tail -40 "$out/cmake.log" "$out/build.log"; exit 1; }
fi

for tok in llama3 qwen3; do
  timeout 300 $bin/zinfer-grammar-bench --tokenizer tests/data/tokenizers/$tok --steps 2000 --schema "$schema" \
    > "$out/grammar-$tok.txt" 2>&1
  echo "grammar bench $tok: rc $?"; cat "$out/grammar-$tok.txt"
done

if [ ! -f "$model/model.safetensors" ]; then
  $bin/zinfer make-model --config tests/data/configs/llama-3-8b/config.json --out "$model" \
    --tokenizer tests/data/tokenizers/llama3 > "$out/make-model.log" 2>&1 || { cat "$out/make-model.log"; exit 1; }
fi
cat > "$out/serve.toml" <<TOML
[server]
port = $port
zmq_endpoint = "tcp://127.0.0.1:$((port + 1))"
served_model_name = "llama3-8b-shape"
[model]
path = "$model"
device = "cuda"
[scheduler]
max_num_seqs = 256
max_num_batched_tokens = 8192
[cache]
gpu_memory_utilization = 0.9
# Every run sends the same prompts (seed 0): without this, the runs after the first find them in
# the prefix cache and do less prefill beside their decodes.
enable_prefix_caching = false
TOML
$bin/zinfer serve --config "$out/serve.toml" > "$out/server.log" 2>&1 &
server=$!
for _ in $(seq 1 240); do
  curl -sf localhost:$port/health > /dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { echo "server died"; tail -30 "$out/server.log"; exit 1; }
  sleep 1
done
body=$(/usr/bin/env python3 -c 'import json,sys; print(json.dumps({"response_format": {"type": "json_schema", "json_schema": {"name": "record", "schema": json.load(open(sys.argv[1]))}}}))' "$schema")
run() {  # run NAME PROMPTS [zinfer-bench options...]
  local name=$1 n=$2; shift 2
  timeout 900 $bin/zinfer-bench serve --backend openai --port "$port" --model "$model" \
    --served-model-name llama3-8b-shape --dataset-name random --random-input-len 512 --random-output-len 128 \
    --num-prompts "$n" --max-concurrency "$concurrency" --request-rate inf --seed 0 \
    --metric-percentiles 50,90,99 --disable-tqdm --save-result --result-dir "$out" --result-filename "$name.json" \
    "$@" > "$out/$name.txt" 2>&1
  echo "$name: rc $?"; grep -E "Successful|Output token|Median TPOT|P99 TPOT|Median TTFT" "$out/$name.txt"
}
# The first requests pay for the cuBLASLt choices and the CUDA graphs of the decode buckets.
run warmup 128
run warmup_json_schema 64 --extra-body "$body"
run free "$prompts"
run json_schema "$prompts" --extra-body "$body"
run free_again "$prompts"
curl -s localhost:$port/metrics > "$out/metrics.txt"
kill $server; wait $server 2>/dev/null
python3 - "$out" <<'PY'
import json, sys, os
d = sys.argv[1]
r = {n: json.load(open(os.path.join(d, n + ".json"))) for n in ("free", "json_schema", "free_again")}
for q in ("median", "p99"):
    key = f"{q}_tpot_ms"
    free = (r["free"][key] + r["free_again"][key]) / 2
    js = r["json_schema"][key]
    print(f"TPOT {q}: free {r['free'][key]:.2f} / {r['free_again'][key]:.2f} ms, json_schema {js:.2f} ms, "
          f"ratio {js / free:.3f} (bar <= 1.05)")
PY
