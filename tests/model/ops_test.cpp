// The CPU ops against straightforward float64 computations at odd sizes, and paged attention
// against contiguous attention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/cpu/ops.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cpu {
namespace {

std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

class LinearSizes : public ::testing::TestWithParam<std::tuple<int, int, int, bool>> {};

TEST_P(LinearSizes, MatchesFloat64) {
  const auto [M, N, K, with_bias] = GetParam();
  std::vector<float> x = randn(size_t(M) * K, 1), w = randn(size_t(N) * K, 2), b = randn(N, 3);
  std::vector<float> y(size_t(M) * N);
  linear(x.data(), w.data(), with_bias ? b.data() : nullptr, y.data(), M, N, K);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = with_bias ? b[n] : 0.0;
      for (int k = 0; k < K; ++k) ref += double(x[m * K + k]) * w[n * K + k];
      ASSERT_NEAR(y[m * N + n], ref, 1e-4 * std::sqrt(double(K)) + 1e-5 * std::abs(ref)) << m << "," << n;
    }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, LinearSizes,
                         ::testing::Values(std::make_tuple(1, 97, 54, false), std::make_tuple(17, 54, 97, true),
                                           std::make_tuple(97, 17, 54, false), std::make_tuple(5, 301, 7, true),
                                           std::make_tuple(54, 97, 17, true), std::make_tuple(3, 1000, 130, false)));

TEST(Linear, RowResultDoesNotDependOnBatch) {
  const int N = 97, K = 54;
  std::vector<float> x = randn(17 * K, 4), w = randn(N * K, 5);
  std::vector<float> all(17 * N), one(N);
  linear(x.data(), w.data(), nullptr, all.data(), 17, N, K);
  for (int m = 0; m < 17; ++m) {
    linear(x.data() + m * K, w.data(), nullptr, one.data(), 1, N, K);
    for (int n = 0; n < N; ++n) ASSERT_EQ(one[n], all[m * N + n]);  // bitwise
  }
}

TEST(RmsNorm, MatchesFloat64) {
  const int rows = 17, dim = 97;
  std::vector<float> x = randn(rows * dim, 6, 3.0f), w = randn(dim, 7), y(rows * dim);
  rms_norm(x.data(), w.data(), y.data(), rows, dim, 1e-5f);
  for (int r = 0; r < rows; ++r) {
    double ss = 0;
    for (int i = 0; i < dim; ++i) ss += double(x[r * dim + i]) * x[r * dim + i];
    const double inv = 1.0 / std::sqrt(ss / dim + 1e-5);
    for (int i = 0; i < dim; ++i) ASSERT_NEAR(y[r * dim + i], w[i] * x[r * dim + i] * inv, 1e-5);
  }
}

TEST(Rope, RotateHalfConvention) {
  const int T = 3, heads = 5, D = 54;
  std::vector<float> x = randn(T * heads * D, 8), orig = x;
  std::vector<float> inv_freq(D / 2);
  for (int i = 0; i < D / 2; ++i) inv_freq[i] = static_cast<float>(std::pow(10000.0, -2.0 * i / D));
  const std::vector<int32_t> pos = {0, 17, 97};
  rope(x.data(), T, heads, D, pos.data(), inv_freq.data());
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < D; ++i) {
        const float* o = orig.data() + (t * heads + h) * D;
        const int j = i % (D / 2);
        const double a = double(pos[t]) * inv_freq[j];
        // rotate_half(x) = cat(-x[D/2:], x[:D/2])
        const double rotated = i < D / 2 ? -o[i + D / 2] : o[i - D / 2];
        ASSERT_NEAR(x[(t * heads + h) * D + i], o[i] * std::cos(a) + rotated * std::sin(a), 2e-5);
      }
}

TEST(SiluMul, MatchesFloat64) {
  const int T = 17, I = 97;
  std::vector<float> gu = randn(T * 2 * I, 9, 4.0f), out(T * I);
  silu_mul(gu.data(), out.data(), T, I);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < I; ++i) {
      const double g = gu[t * 2 * I + i], u = gu[t * 2 * I + I + i];
      ASSERT_NEAR(out[t * I + i], g / (1 + std::exp(-g)) * u, 1e-5 * (1 + std::abs(g * u)));
    }
}

TEST(Linear, Bf16WeightsGiveTheBitsOfTheirFloat32Widening) {
  const int M = 5, N = 97, K = 54;
  std::vector<float> x = randn(M * K, 18), w = randn(N * K, 19), b = randn(N, 20);
  std::vector<uint16_t> w16(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    w16[i] = float_to_bf16(w[i]);
    w[i] = bf16_to_float(w16[i]);
  }
  std::vector<float> y32(M * N), y16(M * N);
  linear(x.data(), w.data(), b.data(), y32.data(), M, N, K);
  linear_bf16(x.data(), w16.data(), b.data(), y16.data(), M, N, K);
  EXPECT_EQ(y32, y16);
}

// Contiguous float64 attention of one sequence whose tokens sit at positions [0, n): q [n, H, D],
// k/v [n, KVH, D]; query rows [first_query, n) are computed.
std::vector<double> reference_attention(const std::vector<float>& q, const std::vector<float>& k,
                                        const std::vector<float>& v, int n, int first_query, int H, int KVH, int D,
                                        double scale, int window) {
  std::vector<double> out(size_t(n - first_query) * H * D, 0.0);
  for (int t = first_query; t < n; ++t)
    for (int h = 0; h < H; ++h) {
      const int g = h / (H / KVH);
      const int lo = window > 0 ? std::max(0, t - window + 1) : 0;
      std::vector<double> s;
      double mx = -INFINITY;
      for (int j = lo; j <= t; ++j) {
        double d = 0;
        for (int e = 0; e < D; ++e) d += double(q[(t * H + h) * D + e]) * k[(j * KVH + g) * D + e];
        s.push_back(d * scale);
        mx = std::max(mx, s.back());
      }
      double z = 0;
      for (double& x : s) z += (x = std::exp(x - mx));
      for (int j = lo; j <= t; ++j)
        for (int e = 0; e < D; ++e) out[((t - first_query) * H + h) * D + e] += s[j - lo] / z * v[(j * KVH + g) * D + e];
    }
  return out;
}

struct AttentionCase {
  int prefix, chunk, window;
};

class PagedAttention : public ::testing::TestWithParam<AttentionCase> {};

// Invariant 24 (docs/architecture.md): KV layout [num_blocks, block_size, num_kv_heads, head_dim] per layer for K and V, same on the host.
// A sequence with `prefix` cached tokens and a `chunk` of new ones, its blocks scattered over the
// cache in a shuffled order, next to a second sequence decoding one token: the paged result must
// equal contiguous attention.
TEST_P(PagedAttention, EqualsContiguous) {
  const auto [prefix, chunk, window] = GetParam();
  const int H = 6, KVH = 2, D = 17, bs = 16, num_blocks = 40;
  const int n = prefix + chunk;
  const int n2 = 54;  // the decoding neighbour's context
  std::vector<float> kc(size_t(num_blocks) * bs * KVH * D, NAN), vc(kc.size(), NAN);
  PagedKvLayer cache{kc.data(), vc.data(), num_blocks, bs, KVH, D};

  std::vector<int32_t> perm(num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(11));
  const int blocks1 = (n + bs - 1) / bs, blocks2 = (n2 + bs - 1) / bs;
  ASSERT_LE(blocks1 + blocks2, num_blocks);
  std::vector<int32_t> table1(perm.begin(), perm.begin() + blocks1);
  std::vector<int32_t> table2(perm.begin() + blocks1, perm.begin() + blocks1 + blocks2);

  std::vector<float> q1 = randn(size_t(n) * H * D, 12), k1 = randn(size_t(n) * KVH * D, 13), v1 = randn(size_t(n) * KVH * D, 14);
  std::vector<float> q2 = randn(size_t(n2) * H * D, 15), k2 = randn(size_t(n2) * KVH * D, 16), v2 = randn(size_t(n2) * KVH * D, 17);
  auto slots_of = [&](const std::vector<int32_t>& table, int from, int to) {
    std::vector<int64_t> s;
    for (int p = from; p < to; ++p) s.push_back(int64_t(table[p / bs]) * bs + p % bs);
    return s;
  };
  // Everything of both sequences goes into the cache (the prefix as an earlier step would have).
  auto s1 = slots_of(table1, 0, n), s2 = slots_of(table2, 0, n2);
  write_kv(cache, k1.data(), v1.data(), s1.data(), n);
  write_kv(cache, k2.data(), v2.data(), s2.data(), n2);

  // The step's queries: seq 1's chunk, then seq 2's last token.
  std::vector<float> q((chunk + 1) * H * D);
  std::copy(q1.begin() + size_t(prefix) * H * D, q1.end(), q.begin());
  std::copy(q2.end() - H * D, q2.end(), q.begin() + size_t(chunk) * H * D);
  AttentionSeq seqs[2] = {{0, chunk, prefix, table1.data(), blocks1}, {chunk, 1, n2 - 1, table2.data(), blocks2}};
  std::vector<float> out((chunk + 1) * H * D);
  const double scale = 1.0 / std::sqrt(double(D));
  paged_attention(q.data(), cache, seqs, 2, H, float(scale), window, out.data());

  auto ref1 = reference_attention(q1, k1, v1, n, prefix, H, KVH, D, scale, window);
  auto ref2 = reference_attention(q2, k2, v2, n2, n2 - 1, H, KVH, D, scale, window);
  for (size_t i = 0; i < ref1.size(); ++i) ASSERT_NEAR(out[i], ref1[i], 2e-5) << i;
  for (size_t i = 0; i < ref2.size(); ++i) ASSERT_NEAR(out[size_t(chunk) * H * D + i], ref2[i], 2e-5) << i;
}

INSTANTIATE_TEST_SUITE_P(Shapes, PagedAttention,
                         ::testing::Values(AttentionCase{0, 97, 0}, AttentionCase{54, 17, 0}, AttentionCase{96, 1, 0},
                                           AttentionCase{17, 54, 20}, AttentionCase{0, 1, 0}));

}  // namespace
}  // namespace zinfer::gpu::cpu
