// prompt_logprobs on the CUDA backend (label gpu; skips itself without CUDA, on a CPU build too):
// score_prompts through the CUDA backend's forward_logits agrees with the CPU backend's on the same
// random checkpoint, within bf16's tolerance, and the step after the scoring samples greedily what
// an unscored run samples.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "actors/executor/prompt_scoring.h"
#include "gpu/backend.h"
#include "gpu/random_model.h"

namespace zinfer::actors {
namespace {

std::string checkpoint() {
  gpu::ModelConfig c;
  c.architecture = gpu::Architecture::kLlama;
  c.architecture_name = "LlamaForCausalLM";
  c.vocab_size = 300;
  c.hidden_size = 128;
  c.intermediate_size = 256;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 32;
  c.max_position_embeddings = 512;
  c.torch_dtype = "float32";
  c.eos_token_ids = {2};
  c.bos_token_id = 1;
  const std::string dir = std::string(ZINFER_BINARY_DIR) + "/tests/executor/models/prompt_scoring";
  if (!std::filesystem::exists(dir + "/model.safetensors")) {
    gpu::RandomModelOptions o;
    o.seed = 11;
    o.stddev = 0.08f;
    o.norm_stddev = 0.1f;
    gpu::write_random_model(dir, c, o);
  }
  return dir;
}

std::unique_ptr<gpu::Backend> open(const std::string& device, const std::string& dir) {
  gpu::BackendOptions o;
  o.model_dir = dir;
  o.device = device;
  o.num_gpu_blocks = 16;
  o.max_num_seqs = 4;
  o.max_num_batched_tokens = 256;
  o.max_model_len = 256;
  o.swap_space_bytes = 0;
  return gpu::make_backend(o);
}

TEST(GpuPromptScoring, CudaAgreesWithCpu) {
  const std::string dir = checkpoint();
  std::unique_ptr<gpu::Backend> cuda;
  try {
    cuda = open("cuda", dir);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "skipped: no CUDA device (" << e.what() << ")";
  }
  auto cpu = open("cpu", dir);
  std::vector<int32_t> prompt(60);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 131 + 7) % 300);
  auto score = [&](gpu::Backend& b) {
    gpu::BatchInput step;
    gpu::SequenceInput chunk;
    chunk.seq_id = 1;
    chunk.token_ids.assign(prompt.begin(), prompt.begin() + 40);
    chunk.num_tokens = 40;
    for (int k = 0; k < 16; ++k) chunk.block_table.push_back(15 - k);
    step.seqs = {chunk};
    b.step(step);
    const std::vector<protocol::PromptScoring> want = {{1, 3, prompt[40]}};
    auto lp = score_prompts(b, want, step, 16)[0];
    gpu::BatchInput rest;
    gpu::SequenceInput tail = chunk;
    tail.token_ids.assign(prompt.begin() + 40, prompt.end());
    tail.num_tokens = 20;
    tail.start_pos = 40;
    tail.sample = true;
    tail.sampling.temperature = 0.0f;
    rest.seqs = {tail};
    const int32_t next = b.step(rest)[0].token;
    return std::make_pair(lp, next);
  };
  const auto [on_cpu, next_cpu] = score(*cpu);
  const auto [on_gpu, next_gpu] = score(*cuda);
  ASSERT_EQ(on_gpu.logprobs.size(), 40u);
  int same_top = 0;
  for (size_t i = 0; i < 40; ++i) {
    EXPECT_NEAR(on_gpu.logprobs[i], on_cpu.logprobs[i], 0.05) << "position " << i + 1;
    // A random model's logits are nearly tied: bf16 rounding reorders the tokens around the
    // scored one, so its rank moves by a few places (up to 4 seen on an H200); a scoring of the
    // wrong position would move it across the vocabulary.
    EXPECT_LE(std::abs(on_gpu.ranks[i] - on_cpu.ranks[i]), 8) << "position " << i + 1;
    same_top += on_gpu.top_logprobs[i][0].token == on_cpu.top_logprobs[i][0].token;
  }
  EXPECT_GE(same_top, 36);  // bf16 may swap near ties
  EXPECT_EQ(next_gpu, next_cpu);  // the scoring pass left the cache as the step wrote it
}

}  // namespace
}  // namespace zinfer::actors
