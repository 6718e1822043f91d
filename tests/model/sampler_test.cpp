// Sampling: greedy, logprobs of the raw logits, top-k/top-p restriction, seeded draws that depend
// only on (seed, sample index), and the sampling rules (penalties, min_p, logit_bias, min_tokens,
// bad words, allowed tokens) against the float64 reference of vLLM's definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <random>
#include <vector>

#include "gpu/cpu/sampler.h"
#include "tests/model/logits_reference.h"

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

// ---- sampling rules ---------------------------------------------------------------------------

std::vector<float> random_logits(int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 2.0f);
  std::vector<float> l(vocab);
  for (float& x : l) x = d(rng);
  return l;
}

void expect_same_logits(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_TRUE(std::isinf(got[i]) && got[i] < 0) << "token " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << "token " << i;
    }
  }
}

TEST(SamplingRules, ProcessedLogitsMatchTheReference) {
  const int V = 96;
  const std::vector<float> raw = random_logits(V, 1);
  SamplingRules r = reference::every_rule(V);
  for (int sample_index : {0, 2, 3, 7}) {  // min_tokens 3: stop ids masked at 0 and 2 only
    std::vector<int32_t> outputs = r.output_ids;
    std::vector<float> got = raw;
    apply_sampling_rules(got.data(), V, r, outputs, sample_index);
    expect_same_logits(got, reference::processed_logits(raw, r, outputs, sample_index));
  }
  // Each rule alone, so that one cannot hide another.
  for (int which = 0; which < 7; ++which) {
    SamplingRules one;
    if (which == 0) one.repetition_penalty = 0.8f, one.prompt_ids = {1, 2}, one.output_ids = {2, 3};
    if (which == 1) one.frequency_penalty = -0.5f, one.output_ids = {4, 4, 4, 5};
    if (which == 2) one.presence_penalty = 1.25f, one.output_ids = {4, 4, 6}, one.prompt_ids = {7};
    if (which == 3) one.logit_bias = {{0, 100.0f}, {3, -7.5f}};
    if (which == 4) one.allowed_token_ids = {5, 17, 60};
    if (which == 5) one.bad_words = {{8}, {9, 10}, {11, 12}}, one.output_ids = {3, 11};
    if (which == 6) one.min_tokens = 2, one.min_tokens_stop_ids = {0, 95}, one.output_ids = {1};
    std::vector<float> got = raw;
    apply_sampling_rules(got.data(), V, one, one.output_ids, static_cast<int>(one.output_ids.size()));
    expect_same_logits(got, reference::processed_logits(raw, one, one.output_ids,
                                                        static_cast<int>(one.output_ids.size())));
  }
}

TEST(SamplingRules, BannedTokensFollowBadWordPrefixesAndMinTokens) {
  SamplingRules r;
  r.bad_words = {{5}, {1, 2}, {1, 2, 3}, {9, 9}};
  r.min_tokens = 2;
  r.min_tokens_stop_ids = {0};
  auto banned = [&](std::vector<int32_t> out) {
    auto b = banned_tokens(r, out, static_cast<int32_t>(out.size()));
    return std::set<int32_t>(b.begin(), b.end());
  };
  EXPECT_EQ(banned({}), (std::set<int32_t>{0, 5}));
  EXPECT_EQ(banned({7}), (std::set<int32_t>{0, 5}));
  EXPECT_EQ(banned({7, 1}), (std::set<int32_t>{5, 2}));
  EXPECT_EQ(banned({1, 2}), (std::set<int32_t>{5, 3}));
  EXPECT_EQ(banned({9}), (std::set<int32_t>{0, 5, 9}));
}

TEST(SamplingRules, GreedyTakesTheArgmaxOfTheProcessedLogits) {
  const int V = 96;
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> raw = random_logits(V, 100 + seed);
    auto rules = std::make_shared<SamplingRules>(reference::every_rule(V));
    SamplingConfig c;
    c.temperature = 0.0f;
    c.rules = rules;
    c.sample_index = static_cast<int32_t>(seed % 5);
    c.top_logprobs = 2;
    const Sample s = sample_logits(raw.data(), V, c, 0, rules->output_ids);
    const auto want = reference::processed_logits(raw, *rules, rules->output_ids, c.sample_index);
    EXPECT_EQ(s.token, std::max_element(want.begin(), want.end()) - want.begin()) << "seed " << seed;
    // Logprobs stay those of the raw logits.
    EXPECT_NEAR(s.logprob, log_softmax(raw, s.token), 1e-5);
    EXPECT_EQ(s.top[0].first, std::max_element(raw.begin(), raw.end()) - raw.begin());
  }
}

// Draws from many sample indices: every token drawn has reference probability > 0, and the
// frequencies follow the reference within 5 standard deviations.
void expect_distribution(const std::vector<float>& raw, const SamplingConfig& c, const std::vector<double>& want,
                         int draws) {
  std::map<int, int> h;
  SamplingConfig k = c;
  for (int i = 0; i < draws; ++i) {
    k.sample_index = 1000 + i;  // past min_tokens
    ++h[sample_logits(raw.data(), static_cast<int32_t>(raw.size()), k, 0,
                      c.rules ? std::span<const int32_t>(c.rules->output_ids) : std::span<const int32_t>())
            .token];
  }
  for (size_t t = 0; t < want.size(); ++t) {
    const double f = h.count(static_cast<int>(t)) ? h[static_cast<int>(t)] / double(draws) : 0.0;
    if (want[t] == 0) {
      EXPECT_EQ(f, 0.0) << "token " << t << " has probability 0";
    } else {
      const double sd = std::sqrt(want[t] * (1 - want[t]) / draws);
      EXPECT_NEAR(f, want[t], 5 * sd + 1e-3) << "token " << t;
    }
  }
}

TEST(SamplingRules, DrawsFollowTheReferenceDistribution) {
  const int V = 64;
  const std::vector<float> raw = random_logits(V, 7);
  struct Case {
    float temperature, min_p, top_p;
    int top_k;
  };
  for (const Case& cs : {Case{1.0f, 0.0f, 1.0f, -1}, Case{0.8f, 0.05f, 1.0f, -1}, Case{1.3f, 0.1f, 0.9f, -1},
                         Case{0.7f, 0.02f, 1.0f, 6}, Case{1.0f, 0.0f, 0.8f, 10}}) {
    auto rules = std::make_shared<SamplingRules>(reference::every_rule(V));
    rules->min_p = cs.min_p;
    SamplingConfig c;
    c.temperature = cs.temperature;
    c.top_p = cs.top_p;
    c.top_k = cs.top_k;
    c.seed = 42;
    c.rules = rules;
    const auto x = reference::processed_logits(raw, *rules, rules->output_ids, 1000);
    SCOPED_TRACE("temperature " + std::to_string(cs.temperature) + " min_p " + std::to_string(cs.min_p));
    expect_distribution(raw, c, reference::probabilities(x, cs.temperature, cs.min_p, cs.top_k, cs.top_p), 20000);
  }
}

TEST(SamplingRules, MinTokensMasksStopTokensThenReleasesThem) {
  // The stop token dominates; while sample_index < min_tokens it is never drawn, even greedily.
  std::vector<float> logits = {10.0f, 1.0f, 0.5f, 0.0f};
  auto rules = std::make_shared<SamplingRules>();
  rules->min_tokens = 4;
  rules->min_tokens_stop_ids = {0};
  SamplingConfig c;
  c.temperature = 0.0f;
  c.rules = rules;
  for (int i = 0; i < 4; ++i) {
    c.sample_index = i;
    EXPECT_EQ(sample_logits(logits.data(), 4, c, 0).token, 1) << i;
  }
  c.sample_index = 4;
  EXPECT_EQ(sample_logits(logits.data(), 4, c, 0).token, 0);
}

TEST(SamplingRules, EveryTokenMaskedFallsBackToTheRawArgmax) {
  std::vector<float> logits = {0.0f, 2.0f, 1.0f};
  auto rules = std::make_shared<SamplingRules>();
  rules->allowed_token_ids = {2};
  rules->bad_words = {{2}};
  SamplingConfig c;
  c.temperature = 1.0f;
  c.seed = 1;
  c.rules = rules;
  EXPECT_EQ(sample_logits(logits.data(), 3, c, 0).token, 1);
}

TEST(SamplingRules, ValidateNamesTheField) {
  auto message = [](const SamplingRules& r) {
    try {
      r.validate(10);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  SamplingRules r;
  EXPECT_EQ(message(r), "");
  r.logit_bias = {{10, 1.0f}};
  EXPECT_NE(message(r).find("logit_bias"), std::string::npos);
  r = {};
  r.allowed_token_ids = {3, 3};
  EXPECT_NE(message(r).find("allowed_token_ids"), std::string::npos);
  r = {};
  r.repetition_penalty = 0.0f;
  EXPECT_NE(message(r).find("repetition_penalty"), std::string::npos);
  r = {};
  r.bad_words = {{}};
  EXPECT_NE(message(r).find("bad_words"), std::string::npos);
  r = {};
  r.min_p = 1.5f;
  EXPECT_NE(message(r).find("min_p"), std::string::npos);
}

}  // namespace
}  // namespace zinfer::gpu::cpu
