// Helpers shared by the model tests: scratch folders and small model configs.
#pragma once

#include <atomic>
#include <exception>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "gpu/model_config.h"

namespace zinfer::gpu::test {

// A fresh folder under the system temp dir, removed when the object goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("zinfer-model-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::filesystem::path path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A small Llama-family config; callers flip the per-architecture flags.
inline ModelConfig tiny_config(Architecture arch) {
  ModelConfig c;
  c.architecture = arch;
  c.architecture_name = arch == Architecture::kLlama     ? "LlamaForCausalLM"
                        : arch == Architecture::kMistral ? "MistralForCausalLM"
                        : arch == Architecture::kQwen2   ? "Qwen2ForCausalLM"
                                                         : "Qwen3ForCausalLM";
  c.vocab_size = 97;
  c.hidden_size = 48;
  c.intermediate_size = 72;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 6;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  c.max_position_embeddings = 512;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 10000.0;
  c.attention_bias = arch == Architecture::kQwen2;
  c.qk_norm = arch == Architecture::kQwen3;
  if (arch == Architecture::kQwen3) c.head_dim = 12;  // != hidden / heads, as Qwen3 allows
  c.tie_word_embeddings = arch == Architecture::kQwen2;
  c.eos_token_ids = {2};
  c.bos_token_id = 1;
  return c;
}

// The message of what `f` throws, or "" when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace zinfer::gpu::test
