// The default model (`zinfer make-model`): a loadable Qwen3 checkpoint with the real Qwen3
// vocabulary and stop tokens, deterministic for a seed, decodable on the CPU backend.
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpu/backend.h"
#include "gpu/default_model.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu {
namespace {

const std::string kQwen3Tokenizer = std::string(ZINFER_SOURCE_DIR) + "/tests/data/tokenizers/qwen3";

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(DefaultModel, IsAQwen3CheckpointWithTheQwen3Vocabulary) {
  test::ScratchDir dir("default");
  const auto info = write_default_model(dir.str(), kQwen3Tokenizer, 7);
  EXPECT_LT(info.seconds, 10.0);
  const ModelConfig c = load_model_config(dir.str());
  EXPECT_EQ(c.architecture, Architecture::kQwen3);
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(slurp(dir.path() / "tokenizer.json"), slurp(kQwen3Tokenizer + "/tokenizer.json"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "tokenizer_config.json"));

  test::ScratchDir again("default");
  write_default_model(again.str(), kQwen3Tokenizer, 7);
  EXPECT_EQ(slurp(dir.path() / "model.safetensors"), slurp(again.path() / "model.safetensors"));
  test::ScratchDir other("default");
  write_default_model(other.str(), kQwen3Tokenizer, 8);
  EXPECT_NE(slurp(dir.path() / "model.safetensors"), slurp(other.path() / "model.safetensors"));
}

TEST(DefaultModel, MissingTokenizerIsNamed) {
  test::ScratchDir dir("default");
  try {
    write_default_model(dir.str() + "/m", dir.str() + "/nowhere", 0);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("nowhere"), std::string::npos);
  }
}

// Greedy decoding on the CPU; prints the decode rate (the goal is >= 50 tokens/s on 2 cores; no
// timing is asserted in a unit test).
TEST(DefaultModel, DecodesGreedilyOnTheCpu) {
  test::ScratchDir dir("default");
  write_default_model(dir.str(), kQwen3Tokenizer, 0);
  BackendOptions o;
  o.model_dir = dir.str();
  o.num_gpu_blocks = 16;
  auto be = make_backend(o);
  SequenceInput s;
  s.seq_id = 1;
  s.token_ids = {151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198};  // a chat prompt's ids
  s.num_tokens = int32_t(s.token_ids.size());
  s.block_table = {3, 9, 4, 1, 0, 7};
  s.sample = true;
  s.sampling.temperature = 0.0f;
  BatchInput prefill;
  prefill.seqs = {s};
  int32_t last = be->step(prefill).at(0).token;
  const int steps = 64;
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  for (int i = 0; i < steps; ++i) {
    s.token_ids.clear();
    s.use_last_sampled = true;
    s.num_tokens = 1;
    s.start_pos = 9 + i;
    BatchInput in;
    in.seqs = {s};
    const SampledToken t = be->step(in).at(0);
    ASSERT_GE(t.token, 0);
    ASSERT_LT(t.token, 151936);
    ASSERT_LE(t.logprob, 0.0f);
    last = t.token;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = process_cpu_seconds() - cpu_start;
  // On a shared machine the wall rate understates the speed; the CPU time per token (all threads)
  // is what a quiet machine would need.
  std::printf("default model: greedy decode %.1f tokens/s wall, %.2f ms CPU per token (%d steps, last token %d)\n",
              steps / secs, cpu * 1e3 / steps, steps, last);
}

}  // namespace
}  // namespace zinfer::gpu
