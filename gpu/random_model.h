// Writing a model folder with seeded random weights for a given config: config.json (Hub style:
// top-level rope_theta/rope_scaling/torch_dtype), generation_config.json and model.safetensors in
// the tensor names and layouts of transformers. Used by `zinfer make-model` (the default model)
// and by tests that need a checkpoint of a particular shape.
#pragma once

#include <cstdint>
#include <string>

#include "gpu/model_config.h"

namespace zinfer::gpu {

struct RandomModelOptions {
  uint64_t seed = 0;
  float stddev = 0.02f;       // of the projection and embedding weights
  float norm_stddev = 0.0f;   // norm weights are 1 + N(0, norm_stddev)
  float bias_stddev = 0.02f;  // q/k/v biases (attention_bias)
  bool bf16 = false;          // else float32; also written as torch_dtype
};

// Writes DIR/config.json, DIR/generation_config.json and DIR/model.safetensors (DIR is created).
// Throws std::runtime_error naming the file on an I/O failure.
void write_random_model(const std::string& dir, const ModelConfig& config, const RandomModelOptions& options);

// The config.json text of `config` as transformers would write it for that architecture.
std::string config_json_text(const ModelConfig& config, const std::string& torch_dtype);

}  // namespace zinfer::gpu
