#include "tools/bench/lib/model_shape.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace zinfer::bench {
namespace {

int64_t require_int(const nlohmann::json& c, const char* key, const std::string& origin) {
  const auto it = c.find(key);
  if (it == c.end() || it->is_null()) throw std::runtime_error(origin + ": missing field '" + key + "'");
  if (!it->is_number_integer() || it->get<int64_t>() <= 0) {
    throw std::runtime_error(origin + ": field '" + key + "' is not a positive integer (" + it->dump() + ")");
  }
  return it->get<int64_t>();
}

int64_t optional_int(const nlohmann::json& c, const char* key, int64_t fallback, const std::string& origin) {
  const auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  return require_int(c, key, origin);
}

bool optional_bool(const nlohmann::json& c, const char* key, bool fallback) {
  const auto it = c.find(key);
  return it != c.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace

ModelShape parse_model_shape(const nlohmann::json& config, const std::string& origin) {
  if (!config.is_object()) throw std::runtime_error(origin + ": not a JSON object");
  ModelShape m;
  if (const auto a = config.find("architectures"); a != config.end() && a->is_array() && !a->empty() && (*a)[0].is_string()) {
    m.architecture = (*a)[0].get<std::string>();
  }
  if (const auto t = config.find("model_type"); t != config.end() && t->is_string()) m.model_type = t->get<std::string>();
  m.hidden = require_int(config, "hidden_size", origin);
  m.intermediate = require_int(config, "intermediate_size", origin);
  m.layers = require_int(config, "num_hidden_layers", origin);
  m.heads = require_int(config, "num_attention_heads", origin);
  m.kv_heads = optional_int(config, "num_key_value_heads", m.heads, origin);
  m.vocab = require_int(config, "vocab_size", origin);
  if (m.hidden % m.heads != 0 && !config.contains("head_dim")) {
    throw std::runtime_error(origin + ": hidden_size is not a multiple of num_attention_heads and no head_dim is given");
  }
  m.head_dim = optional_int(config, "head_dim", m.hidden / m.heads, origin);
  if (m.heads % m.kv_heads != 0) {
    throw std::runtime_error(origin + ": num_attention_heads (" + std::to_string(m.heads) +
                             ") is not a multiple of num_key_value_heads (" + std::to_string(m.kv_heads) + ")");
  }
  m.tie_word_embeddings = optional_bool(config, "tie_word_embeddings", false);
  const bool qwen2_family = m.model_type == "qwen2" || m.architecture == "Qwen2ForCausalLM";
  const bool qwen3_family = m.model_type == "qwen3" || m.architecture == "Qwen3ForCausalLM";
  // Qwen1.5/Qwen2 put biases on q, k and v (not o); their configs carry no field that says so.
  m.qkv_bias = qwen2_family || optional_bool(config, "attention_bias", false);
  m.o_bias = !qwen2_family && optional_bool(config, "attention_bias", false);
  m.mlp_bias = optional_bool(config, "mlp_bias", false);
  m.qk_norm = qwen3_family;
  return m;
}

ModelShape load_model_shape(const std::string& path) {
  std::filesystem::path p(path);
  if (std::filesystem::is_directory(p)) p /= "config.json";
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot open model config '" + p.string() + "'");
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error("model config '" + p.string() + "' is not JSON: " + e.what());
  }
  return parse_model_shape(config, p.string());
}

std::array<LinearShape, 7> block_linears(const ModelShape& m) {
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  return {{{q, m.hidden}, {kv, m.hidden}, {kv, m.hidden}, {m.hidden, q},
           {m.intermediate, m.hidden}, {m.intermediate, m.hidden}, {m.hidden, m.intermediate}}};
}

ParamCounts count_params(const ModelShape& m) {
  ParamCounts c;
  c.embedding = m.vocab * m.hidden;
  c.lm_head = m.tie_word_embeddings ? 0 : m.vocab * m.hidden;
  int64_t linear = 0;
  for (const auto& l : block_linears(m)) linear += l.out * l.in;
  c.block_linear = m.layers * linear;
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  int64_t bias = 0;
  if (m.qkv_bias) bias += q + 2 * kv;
  if (m.o_bias) bias += m.hidden;
  if (m.mlp_bias) bias += 2 * m.intermediate + m.hidden;
  c.biases = m.layers * bias;
  c.norms = m.layers * (2 * m.hidden + (m.qk_norm ? 2 * m.head_dim : 0)) + m.hidden;
  return c;
}

}  // namespace zinfer::bench
