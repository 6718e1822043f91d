// A Hugging Face config.json (+ generation_config.json) read into one struct. Both config styles
// are read: Hub checkpoints with top-level rope_theta / rope_scaling / torch_dtype, and
// transformers 5's rope_parameters / dtype. An unsupported architecture or field value is an
// error (ModelConfigError) naming it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/quant/quant_config.h"

namespace zinfer::gpu {

class ModelConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Architecture { kLlama, kMistral, kQwen2, kQwen3, kPhi3 };

struct RopeScaling {
  std::string type = "default";  // "default" | "llama3" | "linear"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
  Architecture architecture = Architecture::kLlama;
  std::string architecture_name;   // as written, e.g. "LlamaForCausalLM"
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;
  int32_t num_hidden_layers = 0;
  int32_t num_attention_heads = 0;
  int32_t num_key_value_heads = 0;
  int32_t head_dim = 0;            // explicit (Qwen3) or hidden_size / num_attention_heads
  int64_t max_position_embeddings = 2048;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;     // q/k/v bias (Qwen2 always; Llama's and Qwen3's attention_bias)
  bool o_proj_bias = false;        // o_proj bias (Llama's and Qwen3's attention_bias; never Qwen2/Mistral)
  bool qk_norm = false;            // Qwen3: RMSNorm on q and k per head
  int32_t sliding_window = 0;      // 0 = none; else every layer attends to the last sliding_window
                                   // positions (Mistral, Phi-3; Qwen2/3 with use_sliding_window on all layers)
  std::string torch_dtype = "float32";  // "float32" | "bfloat16" | "float16"
  std::vector<int32_t> eos_token_ids;   // from generation_config.json, else config.json
  int32_t bos_token_id = -1;
  std::string hidden_act = "silu";
  quant::QuantConfig quantization;     // quantization_config (gpu/quant/quant_config.h); none by default
};

// Reads DIR/config.json and, if present, DIR/generation_config.json.
ModelConfig load_model_config(const std::string& model_dir);
// Parses config.json text (generation_config may be empty). `origin` names the file in errors.
ModelConfig parse_model_config(const std::string& config_json, const std::string& generation_config_json,
                               const std::string& origin);

}  // namespace zinfer::gpu
