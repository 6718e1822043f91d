// The shape of a decoder-only transformer read from a Hugging Face config.json (Llama/Mistral,
// Qwen1.5/Qwen2 — Qwen2ForCausalLM, with biases on q/k/v — and Qwen3, with q/k RMSNorms), and the
// parameter count it implies. Used by `roofline` (and later `sweep`) for the theoretical figures.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace zinfer::bench {

struct ModelShape {
  std::string architecture;  // architectures[0], e.g. "LlamaForCausalLM"
  std::string model_type;    // e.g. "llama", "qwen2"
  int64_t hidden = 0;
  int64_t intermediate = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab = 0;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // Qwen2 family always; Llama when attention_bias is set
  bool o_bias = false;    // Llama's attention_bias also covers o_proj
  bool mlp_bias = false;  // Llama's mlp_bias
  bool qk_norm = false;   // Qwen3: an RMSNorm of head_dim on q and on k in every layer
};

// PATH is a model folder holding config.json, or the config.json itself. Throws
// std::runtime_error naming the file and the missing or malformed field.
ModelShape load_model_shape(const std::string& path);
ModelShape parse_model_shape(const nlohmann::json& config, const std::string& origin);

// One linear layer's weight: [out, in].
struct LinearShape {
  int64_t out = 0;
  int64_t in = 0;
};

// Parameters by kind. Linear weights are those of the transformer blocks (q, k, v, o, gate, up,
// down) — the ones a quantized checkpoint stores in 8 or 4 bits; everything else (embedding,
// lm_head, norms, biases) stays bf16.
struct ParamCounts {
  int64_t embedding = 0;     // vocab * hidden
  int64_t lm_head = 0;       // vocab * hidden, 0 when tied to the embedding
  int64_t block_linear = 0;  // all layers' q, k, v, o, gate, up, down weights
  int64_t biases = 0;
  int64_t norms = 0;         // 2 per layer + final (+ q/k norms)
  int64_t total() const { return embedding + lm_head + block_linear + biases + norms; }
};
ParamCounts count_params(const ModelShape& m);

// The seven linear layers of one block, in the order q, k, v, o, gate, up, down.
std::array<LinearShape, 7> block_linears(const ModelShape& m);

}  // namespace zinfer::bench
