// The grammar mask of the CPU sampler (gpu/token_masks.h; architecture.md I37): a cleared bit is
// -inf before the rules, the temperature and the cuts, greedy included; the logprobs stay those
// of the raw logits; a draw equals the draw from logits where the masked tokens are -inf.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gpu/cpu/sampler.h"
#include "gpu/token_masks.h"

namespace zinfer::gpu::cpu {
namespace {

std::vector<uint32_t> mask_of(int32_t vocab, const std::vector<int32_t>& allowed) {
  std::vector<uint32_t> m((vocab + 31) / 32, 0u);
  for (int32_t id : allowed) m[id / 32] |= 1u << (id % 32);
  return m;
}

std::vector<float> random_logits(int32_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 2.f);
  std::vector<float> l(vocab);
  for (float& x : l) x = d(rng);
  return l;
}

double raw_logprob(const std::vector<float>& l, int32_t id) {
  double mx = -1e30, z = 0;
  for (float x : l) mx = std::max<double>(mx, x);
  for (float x : l) z += std::exp(x - mx);
  return l[id] - mx - std::log(z);
}

TEST(SamplerMask, GreedyTakesTheBestAllowedTokenAndReportsTheRawLogprob) {
  const int32_t vocab = 77;  // not a multiple of 32: the last word is partial
  std::vector<float> l = random_logits(vocab, 1);
  l[5] = 10.f;  // the raw argmax, masked
  l[70] = 3.f;
  l[76] = 4.f;  // the last id, in the partial word
  const auto mask = mask_of(vocab, {3, 70, 76});
  SamplingConfig c;
  c.temperature = 0.f;
  c.top_logprobs = 2;
  const Sample s = sample_logits(l.data(), vocab, c, 0, {}, mask.data());
  EXPECT_EQ(s.token, 76);
  EXPECT_NEAR(s.logprob, raw_logprob(l, 76), 1e-5);
  ASSERT_EQ(s.top.size(), 2u);
  EXPECT_EQ(s.top[0].first, 5);  // alternatives are the raw logits' best, as for the other rules
}

TEST(SamplerMask, DrawsOnlyAllowedTokensWithTheMaskedDistribution) {
  const int32_t vocab = 1001;
  const std::vector<float> l = random_logits(vocab, 2);
  std::vector<int32_t> allowed;
  for (int32_t id = 0; id < vocab; id += 7) allowed.push_back(id);
  const auto mask = mask_of(vocab, allowed);
  std::vector<float> masked = l;
  apply_token_mask(masked.data(), vocab, mask.data());
  for (int32_t id = 0; id < vocab; ++id) EXPECT_EQ(std::isinf(masked[id]), id % 7 != 0) << id;
  for (float top_p : {1.0f, 0.8f}) {
    for (int32_t top_k : {-1, 5}) {
      SamplingConfig c;
      c.temperature = 0.7f;
      c.top_p = top_p;
      c.top_k = top_k;
      c.seed = 11;
      for (int i = 0; i < 200; ++i) {
        c.sample_index = i;
        const Sample got = sample_logits(l.data(), vocab, c, 0, {}, mask.data());
        const Sample want = sample_logits(masked.data(), vocab, c, 0);
        EXPECT_EQ(got.token % 7, 0);
        EXPECT_EQ(got.token, want.token) << "top_p " << top_p << " top_k " << top_k << " draw " << i;
        EXPECT_NEAR(got.logprob, raw_logprob(l, got.token), 1e-4);
      }
    }
  }
}

TEST(SamplerMask, AppliesBeforeTheOtherRules) {
  const int32_t vocab = 40;
  std::vector<float> l(vocab, 0.f);
  l[1] = 5.f;
  l[2] = 1.f;
  auto rules = std::make_shared<SamplingRules>();
  rules->logit_bias = {{1, 10.f}, {3, 100.f}};  // a bias does not lift a masked token
  rules->min_p = 0.5f;
  SamplingConfig c;
  c.rules = rules;
  c.temperature = 0.f;
  const auto mask = mask_of(vocab, {1, 2});
  EXPECT_EQ(sample_logits(l.data(), vocab, c, 0, {}, mask.data()).token, 1);
  c.temperature = 1.f;
  c.seed = 3;
  for (int i = 0; i < 50; ++i) {
    c.sample_index = i;
    const int32_t t = sample_logits(l.data(), vocab, c, 0, {}, mask.data()).token;
    EXPECT_TRUE(t == 1) << t;  // min_p over the masked row: token 2 is far below half of token 1
  }
}

TEST(SamplerMask, AnEmptyMaskFallsBackToTheRawArgmax) {
  // No token allowed: the sampler's documented fallback, which the executor reports as the
  // sequence leaving its grammar.
  const int32_t vocab = 33;
  std::vector<float> l = random_logits(vocab, 4);
  l[32] = 9.f;
  const auto mask = mask_of(vocab, {});
  SamplingConfig c;
  c.temperature = 0.f;
  EXPECT_EQ(sample_logits(l.data(), vocab, c, 0, {}, mask.data()).token, 32);
}

TEST(TokenMasks, FillsOnceAndSharesTheRowsAcrossCallers) {
  TokenMasks m;
  int calls = 0;
  m.reset(2, 3, [&](uint32_t* w, size_t rows, size_t row_words) {
    ++calls;
    for (size_t i = 0; i < rows * row_words; ++i) w[i] = static_cast<uint32_t>(i);
  });
  const uint32_t* a = m.rows();
  const uint32_t* b = m.rows();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a[5], 5u);
  m.reset(1, 3, [](uint32_t*, size_t, size_t) { throw std::runtime_error("no grammar"); });
  EXPECT_THROW(m.rows(), std::runtime_error);
  EXPECT_THROW(m.rows(), std::runtime_error);  // every caller learns it
}

}  // namespace
}  // namespace zinfer::gpu::cpu
