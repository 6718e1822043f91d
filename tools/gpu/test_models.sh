# Sourced by the GPU scripts that compare bf16 with its quantized forms: makes, when missing, the
# Llama-3-8B-shape model with random bf16 weights (zinfer make-model) at $bf16 and its GPTQ int4
# g128 copy (make_gptq_model.py) at $w4, logging into $out. Expects build-gpu/bin/zinfer.
bf16=${MODEL:-/tmp/llama3-8b-shape}
w4=${W4_MODEL:-/tmp/llama3-8b-shape-gptq}
if [ ! -f "$bf16/config.json" ]; then
  build-gpu/bin/zinfer make-model --config tests/data/configs/llama-3-8b/config.json --out "$bf16" \
    --tokenizer tests/data/tokenizers/llama3 > "$out/make-model.log" 2>&1 || { cat "$out/make-model.log"; exit 1; }
fi
if [ ! -f "$w4/config.json" ]; then
  python3 tools/gpu/make_gptq_model.py "$bf16" "$w4" > "$out/make-gptq.log" 2>&1 || { cat "$out/make-gptq.log"; exit 1; }
fi
