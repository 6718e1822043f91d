#include "gpu/default_model.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "gpu/random_model.h"

namespace zinfer::gpu {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kQwen3Vocab = 151936;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(p.string() + ": not valid JSON: " + e.what());
  }
}

// The id of an added token with this content, or -1.
int32_t added_token_id(const nlohmann::json& tok, const std::string& content) {
  if (auto it = tok.find("added_tokens"); it != tok.end() && it->is_array())
    for (const auto& t : *it)
      if (t.value("content", "") == content && t.contains("id")) return t["id"].get<int32_t>();
  return -1;
}

// One more than the largest id of the vocabulary and the added tokens.
int32_t id_bound(const nlohmann::json& tok) {
  int64_t bound = 0;
  if (auto m = tok.find("model"); m != tok.end())
    if (auto v = m->find("vocab"); v != m->end()) {
      if (v->is_object())
        for (const auto& [piece, id] : v->items()) bound = std::max<int64_t>(bound, id.get<int64_t>() + 1);
      else if (v->is_array())  // Unigram: [[piece, score], ...]
        bound = static_cast<int64_t>(v->size());
    }
  if (auto it = tok.find("added_tokens"); it != tok.end() && it->is_array())
    for (const auto& t : *it) bound = std::max<int64_t>(bound, t.value("id", int64_t{0}) + 1);
  return static_cast<int32_t>(bound);
}

}  // namespace

DefaultModelInfo write_default_model(const std::string& dir, const std::string& tokenizer, uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  fs::path tok_json = tokenizer;
  if (fs::is_directory(tok_json)) tok_json /= "tokenizer.json";
  if (!fs::exists(tok_json))
    throw std::runtime_error(tokenizer + ": neither a tokenizer.json nor a folder holding one");
  const fs::path tok_config = tok_json.parent_path() / "tokenizer_config.json";
  const nlohmann::json tok = read_json(tok_json);

  ModelConfig c;
  c.architecture = Architecture::kQwen3;
  c.architecture_name = "Qwen3ForCausalLM";
  const int32_t bound = id_bound(tok);
  if (bound <= 0) throw std::runtime_error(tok_json.string() + ": no vocabulary found");
  c.vocab_size = bound <= kQwen3Vocab ? kQwen3Vocab : (bound + 127) / 128 * 128;
  c.hidden_size = 128;
  c.intermediate_size = 384;
  c.num_hidden_layers = 4;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 32;
  c.max_position_embeddings = 40960;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1000000.0;
  c.tie_word_embeddings = true;
  c.qk_norm = true;
  c.torch_dtype = "bfloat16";
  for (const char* eos : {"<|im_end|>", "<|endoftext|>"})
    if (int32_t id = added_token_id(tok, eos); id >= 0) c.eos_token_ids.push_back(id);
  if (c.eos_token_ids.empty() && fs::exists(tok_config)) {
    const nlohmann::json cfg = read_json(tok_config);
    if (auto e = cfg.find("eos_token"); e != cfg.end()) {
      const std::string content = e->is_string() ? e->get<std::string>() : e->value("content", "");
      if (int32_t id = added_token_id(tok, content); id >= 0) c.eos_token_ids.push_back(id);
    }
  }
  if (c.eos_token_ids.empty())
    throw std::runtime_error(tok_json.string() + ": no <|im_end|>, <|endoftext|> or eos_token to stop on");
  c.bos_token_id = added_token_id(tok, "<|endoftext|>");

  RandomModelOptions o;
  o.seed = seed;
  o.stddev = 0.02f;
  o.norm_stddev = 0.0f;
  o.bf16 = true;
  write_random_model(dir, c, o);
  fs::copy_file(tok_json, fs::path(dir) / "tokenizer.json", fs::copy_options::overwrite_existing);
  if (fs::exists(tok_config))
    fs::copy_file(tok_config, fs::path(dir) / "tokenizer_config.json", fs::copy_options::overwrite_existing);

  std::ofstream readme(fs::path(dir) / "README.md");
  readme << "# zinfer default model\n\nWritten by `zinfer make-model` (seed " << seed
         << "): the Qwen3ForCausalLM architecture at a small size (hidden " << c.hidden_size << ", "
         << c.num_hidden_layers << " layers, " << c.num_attention_heads << " heads, " << c.num_key_value_heads
         << " kv heads, head_dim " << c.head_dim << ", intermediate " << c.intermediate_size
         << ", tied embeddings, bfloat16) with the tokenizer of " << tok_json.string()
         << ".\n\n**The weights are random** (normal, std 0.02): the model runs every stage of zinfer offline, "
            "but its output is noise.\n";
  if (!readme) throw std::runtime_error((fs::path(dir) / "README.md").string() + ": write failed");

  DefaultModelInfo info;
  info.config = c;
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return info;
}

}  // namespace zinfer::gpu
