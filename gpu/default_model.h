// The default model: a small Qwen3ForCausalLM with seeded random weights and a real tokenizer, so
// that zinfer runs offline on a fresh machine (`zinfer make-model`). Its answers are noise: the
// weights are random. It is a real architecture of a real vocabulary, so every stage (tokenizer,
// chat template, scheduler, executor, detokenizer) runs as it would on a trained checkpoint.
#pragma once

#include <cstdint>
#include <string>

#include "gpu/model_config.h"

namespace zinfer::gpu {

struct DefaultModelInfo {
  ModelConfig config;
  double seconds = 0.0;  // time taken to write it
};

// Writes DIR/{config.json, generation_config.json, model.safetensors, tokenizer.json,
// tokenizer_config.json}. `tokenizer` is a folder holding tokenizer.json (and
// tokenizer_config.json), or a tokenizer.json file. The vocabulary is Qwen3's 151936 when it
// covers the tokenizer's ids, else the ids rounded up to a multiple of 128; eos are <|im_end|> and
// <|endoftext|> (or the tokenizer_config's eos_token). Throws std::runtime_error naming the file.
DefaultModelInfo write_default_model(const std::string& dir, const std::string& tokenizer, uint64_t seed);

}  // namespace zinfer::gpu
