// `zinfer make-model --out DIR [--tokenizer PATH] [--seed N] [--config config.json]`: writes the
// small default model (gpu/default_model.h): a Qwen3 architecture with seeded random bf16 weights
// and a real tokenizer. With --config, a model of that config's shape instead (e.g. Llama-3-8B's,
// for benchmarks on the GPU machine), bf16, with the tokenizer copied beside it.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "gpu/default_model.h"
#include "gpu/random_model.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {
namespace {

namespace fs = std::filesystem;

// The checkout's Qwen3 tokenizer: relative to the working directory, else to the binary
// (build*/bin/zinfer sits two levels below the checkout).
std::string default_tokenizer() {
  const fs::path rel = "tests/data/tokenizers/qwen3";
  if (fs::exists(rel / "tokenizer.json")) return rel.string();
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path p = exe.parent_path(); !ec && !p.empty() && p != p.root_path(); p = p.parent_path())
    if (fs::exists(p / rel / "tokenizer.json")) return (p / rel).string();
  throw std::runtime_error("no tokenizer given and " + rel.string() +
                           " not found from the working directory or the binary; pass --tokenizer PATH");
}

}  // namespace

void add_make_model_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("make-model", "write the small default model (Qwen3 architecture, random weights)");
  static std::string out, tokenizer;
  static uint64_t seed = 0;
  cmd->add_option("--out", out, "folder to write the model into")->required();
  cmd->add_option("--tokenizer", tokenizer, "tokenizer.json or a folder holding it (default: the checkout's Qwen3)");
  cmd->add_option("--seed", seed, "seed of the random weights");
  static std::string shape_config;
  cmd->add_option("--config", shape_config, "a config.json whose shape to use (bf16 random weights)")
      ->check(CLI::ExistingFile);
  cmd->callback([] {
    const std::string tok = tokenizer.empty() ? default_tokenizer() : tokenizer;
    if (!shape_config.empty()) {
      gpu::ModelConfig c = gpu::load_model_config(fs::path(shape_config).parent_path().string());
      gpu::RandomModelOptions o;
      o.seed = seed;
      o.bf16 = true;
      gpu::write_random_model(out, c, o);
      fs::path t = fs::is_directory(tok) ? fs::path(tok) : fs::path(tok).parent_path();
      for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) {
        if (fs::exists(t / f)) fs::copy_file(t / f, fs::path(out) / f, fs::copy_options::overwrite_existing);
      }
      std::printf("wrote %s: %s of %s's shape, bf16 random weights (seed %llu)\n", out.c_str(),
                  c.architecture_name.c_str(), shape_config.c_str(), static_cast<unsigned long long>(seed));
      return;
    }
    const auto info = gpu::write_default_model(out, tok, seed);
    const auto& c = info.config;
    std::printf("wrote %s: %s, %d layers, hidden %d, heads %d/%d, head_dim %d, vocab %d, bf16, random weights "
                "(seed %llu) in %.2f s\n",
                out.c_str(), c.architecture_name.c_str(), c.num_hidden_layers, c.hidden_size, c.num_attention_heads,
                c.num_key_value_heads, c.head_dim, c.vocab_size, static_cast<unsigned long long>(seed), info.seconds);
  });
}

}  // namespace zinfer::cli
