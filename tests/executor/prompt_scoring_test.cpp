// prompt_logprobs in the executor (actors/executor/prompt_scoring.h): score_token against a
// log-softmax written out here, and score_prompts on the CPU backend against the logits of the
// whole prompt from a fresh backend, in pieces smaller than the work; the second pass leaves the
// KV cache as the step left it (the next step samples what an unscored run samples).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "actors/executor/prompt_scoring.h"
#include "gpu/backend.h"
#include "gpu/random_model.h"
#include "tests/model/test_util.h"

namespace zinfer::actors {
namespace {

TEST(ScoreToken, LogSoftmaxRankAndAlternatives) {
  const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  double z = 0;
  for (float x : logits) z += std::exp(static_cast<double>(x));
  const TokenScore s = score_token(logits, 4, 3);
  EXPECT_NEAR(s.logprob, 0.5 - std::log(z), 1e-6);
  EXPECT_EQ(s.rank, 4);  // 3.0, 3.0 and 1.0 are larger
  ASSERT_EQ(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].token, 1);  // a tie goes to the smaller id
  EXPECT_EQ(s.top[1].token, 3);
  EXPECT_EQ(s.top[2].token, 0);
  EXPECT_NEAR(s.top[2].logprob, 1.0 - std::log(z), 1e-6);
  EXPECT_EQ(score_token(logits, 1, 0).rank, 1);
  EXPECT_TRUE(score_token(logits, 1, 0).top.empty());
  EXPECT_THROW(score_token(logits, 5, 0), std::invalid_argument);
}

std::unique_ptr<gpu::Backend> backend_on(const std::string& dir) {
  gpu::BackendOptions o;
  o.model_dir = dir;
  o.num_gpu_blocks = 16;
  o.num_cpu_blocks = 1;
  o.num_threads = 1;
  return gpu::make_backend(o);
}

std::vector<float> log_softmax_row(const std::vector<float>& logits, size_t row, size_t vocab) {
  const float* x = logits.data() + row * vocab;
  const float m = *std::max_element(x, x + vocab);
  double z = 0;
  for (size_t v = 0; v < vocab; ++v) z += std::exp(static_cast<double>(x[v] - m));
  std::vector<float> out(vocab);
  for (size_t v = 0; v < vocab; ++v) out[v] = static_cast<float>(x[v] - m - std::log(z));
  return out;
}

TEST(ScorePrompts, CpuBackendMatchesTheWholePromptsLogitsAndKeepsTheCache) {
  gpu::test::ScratchDir dir("score");
  const gpu::ModelConfig config = gpu::test::tiny_config(gpu::Architecture::kLlama);
  gpu::RandomModelOptions ro;
  ro.seed = 7;
  ro.stddev = 0.15f;
  gpu::write_random_model(dir.str(), config, ro);
  const auto vocab = static_cast<size_t>(config.vocab_size);
  std::mt19937 g(3);
  std::vector<int32_t> prompt(40);
  for (auto& t : prompt) t = static_cast<int32_t>(g() % vocab);
  const std::vector<int32_t> table = {0, 1, 2, 3};

  // The reference: the whole prompt's logits at once.
  auto reference = backend_on(dir.str());
  gpu::SequenceInput whole;
  whole.seq_id = 1;
  whole.token_ids = prompt;
  whole.num_tokens = 40;
  whole.block_table = table;
  const std::vector<float> logits = reference->forward_logits(whole);

  // A step computes positions [0, 24) and is scored in pieces of 7; the next work's first token
  // is prompt[24].
  auto backend = backend_on(dir.str());
  gpu::BatchInput step;
  gpu::SequenceInput chunk;
  chunk.seq_id = 1;
  chunk.token_ids.assign(prompt.begin(), prompt.begin() + 24);
  chunk.num_tokens = 24;
  chunk.block_table = table;
  step.seqs = {chunk};
  backend->step(step);
  const std::vector<protocol::PromptScoring> scoring = {{1, 2, prompt[24]}};
  const auto scored = score_prompts(*backend, scoring, step, 7);
  ASSERT_EQ(scored.size(), 1u);
  const auto& lp = scored[0];
  EXPECT_EQ(lp.id, 1u);
  EXPECT_EQ(lp.first_position, 1);
  ASSERT_EQ(lp.logprobs.size(), 24u);  // positions 1 .. 24
  for (size_t p = 1; p <= 24; ++p) {
    const auto row = log_softmax_row(logits, p - 1, vocab);
    EXPECT_NEAR(lp.logprobs[p - 1], row[static_cast<size_t>(prompt[p])], 1e-4) << p;
    int32_t rank = 1;
    for (float x : row) rank += x > row[static_cast<size_t>(prompt[p])] ? 1 : 0;
    EXPECT_EQ(lp.ranks[p - 1], rank) << p;
    ASSERT_EQ(lp.top_logprobs[p - 1].size(), 2u);
    EXPECT_NEAR(lp.top_logprobs[p - 1][0].logprob, *std::max_element(row.begin(), row.end()), 1e-4);
  }

  // The rest of the prompt, sampling greedily: the same token as the reference's last row.
  gpu::BatchInput rest;
  gpu::SequenceInput tail;
  tail.seq_id = 1;
  tail.token_ids.assign(prompt.begin() + 24, prompt.end());
  tail.num_tokens = 16;
  tail.start_pos = 24;
  tail.block_table = table;
  tail.sample = true;
  tail.sampling.temperature = 0.0f;
  rest.seqs = {tail};
  const auto sampled = backend->step(rest);
  const auto last = log_softmax_row(logits, 39, vocab);
  ASSERT_EQ(sampled.size(), 1u);
  EXPECT_EQ(sampled[0].token, static_cast<int32_t>(std::max_element(last.begin(), last.end()) - last.begin()));

  // A work that ends the prompt: its last position is not scored.
  const std::vector<protocol::PromptScoring> ending = {{1, 0, -1}};
  EXPECT_EQ(score_prompts(*backend, ending, rest)[0].logprobs.size(), 15u);
  const std::vector<protocol::PromptScoring> unknown = {{9, 0, -1}};
  EXPECT_THROW(score_prompts(*backend, unknown, rest), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::actors
