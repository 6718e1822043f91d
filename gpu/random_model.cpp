#include "gpu/random_model.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/safetensors_writer.h"

namespace zinfer::gpu {
namespace {

// Normal deviates from a splitmix64 stream through Box-Muller, identical on every platform for a
// seed. The stream is addressable: uniform number j (1-based) is mix(seed + j * golden), and the
// i-th deviate is the cosine (i even) or sine (i odd) half of the pair built from uniforms 2p+1 and
// 2p+2, p = i / 2. So any range of deviates can be computed on its own, in parallel: Llama-3-8B's
// 8 billion values take seconds on 16 cores instead of minutes on one.
class NormalStream {
 public:
  explicit NormalStream(uint64_t seed) : seed_(seed) {}

  // Deviates [first, first + out.size()) of the stream.
  void fill(uint64_t first, std::vector<float>& out, float mean, float stddev) const {
    const int64_t n = static_cast<int64_t>(out.size());
#pragma omp parallel for schedule(static, 1 << 16)
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t i = first + static_cast<uint64_t>(k);
      const uint64_t pair = i / 2;
      double u1 = uniform(2 * pair + 1), u2 = uniform(2 * pair + 2);
      if (u1 < 1e-300) u1 = 1e-300;
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double z = (i % 2 == 0) ? r * std::cos(2.0 * M_PI * u2) : r * std::sin(2.0 * M_PI * u2);
      out[static_cast<size_t>(k)] = mean + stddev * static_cast<float>(z);
    }
  }

 private:
  double uniform(uint64_t j) const {
    uint64_t z = seed_ + j * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }
  uint64_t seed_;
};

const char* model_type(Architecture a) {
  switch (a) {
    case Architecture::kLlama: return "llama";
    case Architecture::kMistral: return "mistral";
    case Architecture::kQwen2: return "qwen2";
    case Architecture::kQwen3: return "qwen3";
    case Architecture::kPhi3: return "phi3";
  }
  return "llama";
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(p.string() + ": write failed");
}

}  // namespace

std::string config_json_text(const ModelConfig& c, const std::string& torch_dtype) {
  nlohmann::ordered_json j;
  j["architectures"] = {c.architecture_name};
  j["model_type"] = model_type(c.architecture);
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["num_key_value_heads"] = c.num_key_value_heads;
  j["head_dim"] = c.head_dim;
  j["hidden_act"] = c.hidden_act;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rms_norm_eps"] = c.rms_norm_eps;
  j["rope_theta"] = c.rope_theta;
  if (c.rope_scaling.type == "default") {
    j["rope_scaling"] = nullptr;
  } else {
    nlohmann::ordered_json s;
    s["rope_type"] = c.rope_scaling.type;
    s["factor"] = c.rope_scaling.factor;
    if (c.rope_scaling.type == "llama3") {
      s["low_freq_factor"] = c.rope_scaling.low_freq_factor;
      s["high_freq_factor"] = c.rope_scaling.high_freq_factor;
      s["original_max_position_embeddings"] = c.rope_scaling.original_max_position_embeddings;
    }
    j["rope_scaling"] = s;
  }
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  if (c.architecture == Architecture::kLlama || c.architecture == Architecture::kQwen3)
    j["attention_bias"] = c.attention_bias;
  if (c.architecture == Architecture::kMistral || c.architecture == Architecture::kPhi3) {
    if (c.sliding_window > 0) j["sliding_window"] = c.sliding_window;
    else j["sliding_window"] = nullptr;
  }
  if (c.bos_token_id >= 0) j["bos_token_id"] = c.bos_token_id;
  if (!c.eos_token_ids.empty()) j["eos_token_id"] = c.eos_token_ids.size() == 1 ? nlohmann::ordered_json(c.eos_token_ids[0]) : nlohmann::ordered_json(c.eos_token_ids);
  j["torch_dtype"] = torch_dtype;
  return j.dump(2) + "\n";
}

void write_random_model(const std::string& dir, const ModelConfig& c, const RandomModelOptions& o) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const std::string dtype = o.bf16 ? "bfloat16" : "float32";
  write_text(fs::path(dir) / "config.json", config_json_text(c, dtype));
  nlohmann::ordered_json gen;
  if (c.bos_token_id >= 0) gen["bos_token_id"] = c.bos_token_id;
  if (!c.eos_token_ids.empty()) gen["eos_token_id"] = c.eos_token_ids;
  write_text(fs::path(dir) / "generation_config.json", gen.dump(2) + "\n");

  const NormalStream normal(o.seed);
  uint64_t drawn = 0;  // deviates of the stream used by the tensors before this one
  SafetensorsWriter writer;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float mean, float stddev) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> values(static_cast<size_t>(n));
    normal.fill(drawn, values, mean, stddev);
    drawn += static_cast<uint64_t>(n);
    if (o.bf16) writer.add_bf16(name, shape, values);
    else writer.add_f32(name, shape, values);
  };
  const int64_t H = c.hidden_size, V = c.vocab_size, I = c.intermediate_size, D = c.head_dim;
  const int64_t nH = c.num_attention_heads, nKV = c.num_key_value_heads;
  add("model.embed_tokens.weight", {V, H}, 0.0f, o.stddev);
  if (!c.tie_word_embeddings) add("lm_head.weight", {V, H}, 0.0f, o.stddev);
  add("model.norm.weight", {H}, 1.0f, o.norm_stddev);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {H}, 1.0f, o.norm_stddev);
    add(p + "post_attention_layernorm.weight", {H}, 1.0f, o.norm_stddev);
    if (c.architecture == Architecture::kPhi3) {  // q/k/v and gate/up stored fused
      add(p + "self_attn.qkv_proj.weight", {(nH + 2 * nKV) * D, H}, 0.0f, o.stddev);
    } else {
      add(p + "self_attn.q_proj.weight", {nH * D, H}, 0.0f, o.stddev);
      add(p + "self_attn.k_proj.weight", {nKV * D, H}, 0.0f, o.stddev);
      add(p + "self_attn.v_proj.weight", {nKV * D, H}, 0.0f, o.stddev);
    }
    add(p + "self_attn.o_proj.weight", {H, nH * D}, 0.0f, o.stddev);
    if (c.attention_bias) {
      add(p + "self_attn.q_proj.bias", {nH * D}, 0.0f, o.bias_stddev);
      add(p + "self_attn.k_proj.bias", {nKV * D}, 0.0f, o.bias_stddev);
      add(p + "self_attn.v_proj.bias", {nKV * D}, 0.0f, o.bias_stddev);
    }
    if (c.o_proj_bias) add(p + "self_attn.o_proj.bias", {H}, 0.0f, o.bias_stddev);
    if (c.qk_norm) {
      add(p + "self_attn.q_norm.weight", {D}, 1.0f, o.norm_stddev);
      add(p + "self_attn.k_norm.weight", {D}, 1.0f, o.norm_stddev);
    }
    if (c.architecture == Architecture::kPhi3) {
      add(p + "mlp.gate_up_proj.weight", {2 * I, H}, 0.0f, o.stddev);
    } else {
      add(p + "mlp.gate_proj.weight", {I, H}, 0.0f, o.stddev);
      add(p + "mlp.up_proj.weight", {I, H}, 0.0f, o.stddev);
    }
    add(p + "mlp.down_proj.weight", {H, I}, 0.0f, o.stddev);
  }
  writer.write((fs::path(dir) / "model.safetensors").string());
}

}  // namespace zinfer::gpu
