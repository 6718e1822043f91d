// Sampling: greedy, logprobs of the raw logits, top-k/top-p restriction, and seeded draws that
// depend only on (seed, sample index).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "gpu/cpu/sampler.h"

namespace zinfer::gpu::cpu {
namespace {

double log_softmax(const std::vector<float>& l, int i) {
  double mx = *std::max_element(l.begin(), l.end()), z = 0;
  for (float x : l) z += std::exp(x - mx);
  return l[i] - mx - std::log(z);
}

TEST(Sampler, GreedyPicksArgmaxWithRawLogprob) {
  std::vector<float> logits = {0.5f, 3.0f, -1.0f, 2.9f, 1.0f};
  SamplingConfig c;
  c.temperature = 0.0f;
  c.top_logprobs = 3;
  Sample s = sample_logits(logits.data(), 5, c, 0);
  EXPECT_EQ(s.token, 1);
  EXPECT_NEAR(s.logprob, log_softmax(logits, 1), 1e-6);
  ASSERT_EQ(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].first, 1);
  EXPECT_EQ(s.top[1].first, 3);
  EXPECT_EQ(s.top[2].first, 4);
  EXPECT_NEAR(s.top[1].second, log_softmax(logits, 3), 1e-6);
}

TEST(Sampler, LogprobIgnoresTemperature) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  SamplingConfig c;
  c.temperature = 0.3f;
  c.seed = 5;
  Sample s = sample_logits(logits.data(), 3, c, 0);
  EXPECT_NEAR(s.logprob, log_softmax(logits, s.token), 1e-6);
}

std::map<int, int> histogram(const std::vector<float>& logits, SamplingConfig c, int draws) {
  std::map<int, int> h;
  for (int i = 0; i < draws; ++i) {
    c.sample_index = i;
    ++h[sample_logits(logits.data(), int32_t(logits.size()), c, 0).token];
  }
  return h;
}

TEST(Sampler, TopKRestrictsToTheKBest) {
  std::vector<float> logits = {1.0f, 1.1f, 0.9f, 1.2f, 0.0f, 1.05f};
  SamplingConfig c;
  c.temperature = 1.0f;
  c.top_k = 2;
  c.seed = 1;
  auto h = histogram(logits, c, 2000);
  EXPECT_EQ(h.size(), 2u);
  EXPECT_GT(h[3], 0);
  EXPECT_GT(h[1], 0);
}

TEST(Sampler, TopPKeepsTheSmallestHeadReachingP) {
  // probabilities ~ 0.5, 0.3, 0.15, 0.05 (logits are their logs)
  std::vector<float> logits = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  SamplingConfig c;
  c.temperature = 1.0f;
  c.top_p = 0.75f;  // 0.5 < 0.75 <= 0.8: keeps tokens 1 and 3
  c.seed = 2;
  auto h = histogram(logits, c, 4000);
  EXPECT_EQ(h.size(), 2u);
  // Renormalised: 0.5/0.8 = 0.625 for token 1.
  EXPECT_NEAR(h[1] / 4000.0, 0.625, 0.04);
  EXPECT_NEAR(h[3] / 4000.0, 0.375, 0.04);
}

TEST(Sampler, TopPOverALargeVocabulary) {
  // One dominant token among 5000: top_p 0.5 must keep only it.
  std::vector<float> logits(5000, 0.0f);
  logits[4321] = 20.0f;
  SamplingConfig c;
  c.temperature = 1.0f;
  c.top_p = 0.5f;
  c.seed = 3;
  auto h = histogram(logits, c, 50);
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(h.begin()->first, 4321);
}

TEST(Sampler, TemperatureFollowsTheSoftmax) {
  std::vector<float> logits = {0.0f, std::log(3.0f)};  // p = 0.25, 0.75 at temperature 1
  SamplingConfig c;
  c.temperature = 1.0f;
  c.seed = 4;
  auto h = histogram(logits, c, 8000);
  EXPECT_NEAR(h[1] / 8000.0, 0.75, 0.02);
  c.temperature = 0.5f;  // p ~ 1:9
  h = histogram(logits, c, 8000);
  EXPECT_NEAR(h[1] / 8000.0, 0.9, 0.02);
}

// Invariant 19 (docs/architecture.md): sampling depends on the request (seed, token index), not on the batch.
TEST(Sampler, SeededDrawsDependOnlyOnSeedAndIndex) {
  std::vector<float> logits(64);
  for (int i = 0; i < 64; ++i) logits[i] = float(i % 7) * 0.3f;
  SamplingConfig c;
  c.temperature = 1.0f;
  c.seed = 1234;
  c.sample_index = 9;
  const int a = sample_logits(logits.data(), 64, c, 111).token;
  EXPECT_EQ(sample_logits(logits.data(), 64, c, 999).token, a);  // unseeded_seed unused
  std::set<int> across_indices;
  for (int i = 0; i < 50; ++i) {
    c.sample_index = i;
    across_indices.insert(sample_logits(logits.data(), 64, c, 0).token);
  }
  EXPECT_GT(across_indices.size(), 10u);
  EXPECT_NE(counter_uniform(1, 2), counter_uniform(2, 1));
  EXPECT_EQ(counter_uniform(7, 8), counter_uniform(7, 8));
}

TEST(Sampler, InvalidTopPIsAnError) {
  std::vector<float> logits = {1.0f, 2.0f};
  SamplingConfig c;
  c.temperature = 1.0f;
  c.top_p = 1.5f;
  EXPECT_THROW(sample_logits(logits.data(), 2, c, 0), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::gpu::cpu
