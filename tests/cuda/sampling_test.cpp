// Sampling: greedy and logprobs against float64, top logprobs, seeded determinism, and the
// distribution of temperature / top-k / top-p draws (fixed seeds, so the counts are exact).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "gpu/cuda/sampling.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

struct Rows {
  std::vector<float> logits, temperature, top_p;
  std::vector<int32_t> top_k, sample_index, num_top;
  std::vector<uint64_t> seed;
  int vocab = 0;
  void add(const std::vector<float>& l, float t, float p, int k, uint64_t s, int idx, int n_top) {
    logits.insert(logits.end(), l.begin(), l.end());
    temperature.push_back(t);
    top_p.push_back(p);
    top_k.push_back(k);
    seed.push_back(s);
    sample_index.push_back(idx);
    num_top.push_back(n_top);
  }
  int n() const { return static_cast<int>(temperature.size()); }
};

struct Result {
  std::vector<int32_t> token;
  std::vector<float> logprob;
  std::vector<int32_t> top_ids;
  std::vector<float> top_lps;
};

Result run(const Rows& r) {
  DeviceArray<float> logits(r.logits), temp(r.temperature), top_p(r.top_p);
  DeviceArray<int32_t> top_k(r.top_k), idx(r.sample_index), num_top(r.num_top);
  DeviceArray<uint64_t> seed(r.seed);
  DeviceArray<int32_t> tok(r.n()), top_ids(static_cast<size_t>(r.n()) * kMaxTopLogprobs);
  DeviceArray<float> lp(r.n()), top_lps(static_cast<size_t>(r.n()) * kMaxTopLogprobs);
  DeviceArray<float> scratch(sampling_scratch_bytes(r.n(), r.vocab) / sizeof(float));
  tok.poison();
  lp.poison();
  SamplingBatch b;
  b.logits = logits.get();
  b.temperature = temp.get();
  b.top_p = top_p.get();
  b.top_k = top_k.get();
  b.seed = seed.get();
  b.sample_index = idx.get();
  b.num_top = num_top.get();
  b.num_rows = r.n();
  b.vocab = r.vocab;
  b.out_token = tok.get();
  b.out_logprob = lp.get();
  b.out_top_ids = top_ids.get();
  b.out_top_logprobs = top_lps.get();
  b.scratch = scratch.get();
  check_cuda(launch_sampling(b, nullptr), "sampling");
  return Result{tok.download(), lp.download(), top_ids.download(), top_lps.download()};
}

std::vector<double> log_softmax(const std::vector<float>& l) {
  double mx = *std::max_element(l.begin(), l.end()), z = 0;
  for (float x : l) z += std::exp(x - mx);
  std::vector<double> out(l.size());
  for (size_t i = 0; i < l.size(); ++i) out[i] = l[i] - mx - std::log(z);
  return out;
}

TEST(CudaSampling, GreedyLogprobAndTopLogprobs) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(7);
  Rows rows;
  rows.vocab = 50021;  // odd, larger than the block
  std::vector<std::vector<float>> all;
  for (int r = 0; r < 17; ++r) {
    all.push_back(random_floats(rows.vocab, rng, 3.f));
    rows.add(all.back(), 0.f, 1.f, -1, 0, 0, r % 6);
  }
  const Result res = run(rows);
  for (int r = 0; r < rows.n(); ++r) {
    const std::vector<double> ls = log_softmax(all[r]);
    std::vector<int> order(rows.vocab);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return all[r][a] > all[r][b]; });
    EXPECT_EQ(res.token[r], order[0]);
    EXPECT_NEAR(res.logprob[r], ls[order[0]], 1e-4);
    for (int k = 0; k < r % 6; ++k) {
      EXPECT_EQ(res.top_ids[r * kMaxTopLogprobs + k], order[k]) << "row " << r << " rank " << k;
      EXPECT_NEAR(res.top_lps[r * kMaxTopLogprobs + k], ls[order[k]], 1e-4);
    }
  }
}

// The row statistics come from slices of the vocabulary: a maximum tied across slices gives the
// first index, masked (-inf) logits add nothing to the softmax's sum, and a vocabulary past
// 64 slices of 4,096 (longer slices) and one within a single slice both work.
TEST(CudaSampling, GreedyTakesTheFirstOfTiedMaximaAcrossSlices) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(11);
  Rows rows;
  rows.vocab = 300007;
  std::vector<float> tied = random_floats(rows.vocab, rng, 3.f);
  for (int i = 100; i < 90000; i += 7) tied[i] = -INFINITY;
  for (int i : {250000, 5000, 4097, 299999}) tied[i] = 100.f;  // far above the random ones
  rows.add(tied, 0.f, 1.f, -1, 0, 0, 3);
  const Result res = run(rows);
  const std::vector<double> ls = log_softmax(tied);
  EXPECT_EQ(res.token[0], 4097);
  EXPECT_NEAR(res.logprob[0], ls[4097], 1e-4);
  EXPECT_EQ(res.top_ids[0], 4097);
  EXPECT_EQ(res.top_ids[1], 5000);
  EXPECT_EQ(res.top_ids[2], 250000);

  Rows small;
  small.vocab = 37;
  std::vector<float> one = random_floats(small.vocab, rng, 3.f);
  one[36] = 100.f;
  small.add(one, 0.f, 1.f, -1, 0, 0, 0);
  const Result r2 = run(small);
  EXPECT_EQ(r2.token[0], 36);
  EXPECT_NEAR(r2.logprob[0], log_softmax(one)[36], 1e-5);
}

// Invariant 19 (docs/architecture.md): sampling depends on the request (seed, token index), not on the batch.
TEST(CudaSampling, SeededDrawsAreReproducibleAndIndependentOfTheBatch) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(8);
  const std::vector<float> l = random_floats(997, rng, 1.f);
  Rows a, b;
  a.vocab = b.vocab = 997;
  for (int i = 0; i < 54; ++i) a.add(l, 1.f, 1.f, -1, 1234, i, 0);
  // The same draws in reverse order, mixed with other seeds.
  for (int i = 53; i >= 0; --i) {
    b.add(l, 1.f, 1.f, -1, 999, i, 0);
    b.add(l, 1.f, 1.f, -1, 1234, i, 0);
  }
  const Result ra = run(a), rb = run(b), ra2 = run(a);
  std::set<int> distinct;
  for (int i = 0; i < 54; ++i) {
    EXPECT_EQ(ra.token[i], ra2.token[i]);
    EXPECT_EQ(ra.token[i], rb.token[2 * (53 - i) + 1]);
    distinct.insert(ra.token[i]);
  }
  EXPECT_GT(distinct.size(), 5u);  // a flat-ish distribution over 997 tokens: many distinct draws
  const std::vector<double> ls = log_softmax(l);
  for (int i = 0; i < 54; ++i) EXPECT_NEAR(ra.logprob[i], ls[ra.token[i]], 1e-4);
}

TEST(CudaSampling, TemperatureTopKTopPDistributions) {
  ZINFER_REQUIRE_CUDA();
  // probabilities 0.5, 0.3, 0.15, 0.05 over four tokens (the rest of the vocabulary at -inf-like).
  const std::vector<double> probs = {0.5, 0.3, 0.15, 0.05};
  std::vector<float> l(97, -1e4f);
  for (int i = 0; i < 4; ++i) l[10 + 3 * i] = static_cast<float>(std::log(probs[i]));
  const int draws = 4000;
  auto histogram = [&](float t, float p, int k) {
    Rows rows;
    rows.vocab = 97;
    for (int i = 0; i < draws; ++i) rows.add(l, t, p, k, 42, i, 0);
    std::map<int, int> h;
    for (int tok : run(rows).token) h[tok]++;
    return h;
  };
  std::map<int, int> plain = histogram(1.f, 1.f, -1);
  for (int i = 0; i < 4; ++i) {
    const double expect = probs[i] * draws, sd = std::sqrt(draws * probs[i] * (1 - probs[i]));
    EXPECT_NEAR(plain[10 + 3 * i], expect, 5 * sd) << "token " << i;
  }
  EXPECT_EQ(plain[10] + plain[13] + plain[16] + plain[19], draws);

  std::map<int, int> top2 = histogram(1.f, 1.f, 2);
  EXPECT_EQ(top2[10] + top2[13], draws);
  EXPECT_NEAR(top2[10], draws * 0.5 / 0.8, 5 * std::sqrt(draws * 0.625 * 0.375));

  // top_p 0.7: {0.5, 0.3} reach it, so only the first two tokens remain.
  std::map<int, int> nucleus = histogram(1.f, 0.7f, -1);
  EXPECT_EQ(nucleus[10] + nucleus[13], draws);
  EXPECT_GT(nucleus[13], 0);

  // Temperature 0.5 squares the odds: p ∝ p_i^2.
  std::map<int, int> sharp = histogram(0.5f, 1.f, -1);
  const double z = 0.25 + 0.09 + 0.0225 + 0.0025;
  EXPECT_NEAR(sharp[10], draws * 0.25 / z, 5 * std::sqrt(draws * (0.25 / z) * (1 - 0.25 / z)));
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
