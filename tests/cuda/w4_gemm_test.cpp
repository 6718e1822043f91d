// The W4A16 kernel (gpu/cuda/w4_gemm.h) against float64 on the host: odd sizes, every row count
// class (1, 3, 8, 9, 16, 17, 33, 64), every group size the layout takes (64, 128, whole rows),
// act-order on and off, zero points symmetric and not, one split and several, both outputs;
// the same for the wide kernel of many rows (1 to 300 rows around its 128-row tile); and the
// dequantization for steps of many rows against the layout read back on the host.
#include <gtest/gtest.h>

#include <cuda_fp16.h>

#include <cmath>
#include <numeric>

#include "gpu/cuda/w4_gemm.h"
#include "gpu/quant/int4_tiles.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

using quant::Int4Tiles;
using quant::IntWeight;

struct Case {
  int n, k, group;  // group -1: one group over k
  bool act_order, symmetric;
};

std::string describe(const Case& c, int m, int splits) {
  return "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " group=" + std::to_string(c.group) +
         (c.act_order ? " act-order" : "") + (c.symmetric ? " sym" : " asym") + " m=" + std::to_string(m) +
         " splits=" + std::to_string(splits);
}

// Scales are fp16 values as GPTQ/AWQ store them; zeros 8 (symmetric) or anywhere in 0..15.
IntWeight random_weight(const Case& c, std::mt19937& rng) {
  IntWeight w;
  w.rows = c.n, w.cols = c.k, w.bits = 4;
  w.group_size = c.group == -1 ? c.k : c.group;
  w.groups = c.k / w.group_size;
  std::uniform_int_distribution<int> nibble(0, 15);
  std::uniform_real_distribution<float> scale(0.002f, 0.03f);
  w.q.resize(static_cast<size_t>(c.n) * c.k);
  for (auto& q : w.q) q = static_cast<uint8_t>(nibble(rng));
  w.zero.resize(static_cast<size_t>(w.groups) * c.n);
  w.scale.resize(w.zero.size());
  for (size_t i = 0; i < w.zero.size(); ++i) {
    w.zero[i] = c.symmetric ? 8 : nibble(rng);
    w.scale[i] = __half2float(__float2half(scale(rng)));
  }
  if (c.act_order) {  // a permutation of k / group_size: every group keeps its size
    w.g_idx.resize(static_cast<size_t>(c.k));
    for (int k = 0; k < c.k; ++k) w.g_idx[k] = static_cast<int32_t>(k / w.group_size);
    std::shuffle(w.g_idx.begin(), w.g_idx.end(), rng);
  }
  return w;
}

struct DeviceLayer {
  DeviceArray<uint32_t> words;
  DeviceArray<float> scales;
  DeviceArray<uint32_t> zeros;
  DeviceArray<int32_t> perm;
  W4Weight w;
  explicit DeviceLayer(const Int4Tiles& t)
      : words(std::vector<uint32_t>(t.words.begin(), t.words.end())), scales(t.scales), zeros(t.zeros), perm(t.perm.empty() ? std::vector<int32_t>{0} : t.perm) {
    w.words = reinterpret_cast<const uint4*>(words.get());
    w.scales = scales.get();
    w.zeros = zeros.get();
    w.perm = t.perm.empty() ? nullptr : perm.get();
    w.n = static_cast<int32_t>(t.rows), w.k = static_cast<int32_t>(t.cols);
    w.group_size = static_cast<int32_t>(t.group_size);
  }
};

// y[m, n] in float64 and the sum of |x · w| (the scale of float32 accumulation error), for the
// weights dense [N, K] (w.to_dense() unless given).
void reference(const IntWeight& w, const std::vector<float>& x, int m, std::vector<double>& y, std::vector<double>& mag,
               std::vector<float> dense = {}) {
  if (dense.empty()) dense = w.to_dense();
  y.assign(static_cast<size_t>(m) * w.rows, 0.0);
  mag.assign(y.size(), 0.0);
  for (int i = 0; i < m; ++i)
    for (int64_t n = 0; n < w.rows; ++n) {
      double s = 0, a = 0;
      for (int64_t k = 0; k < w.cols; ++k) {
        const double p = static_cast<double>(x[i * w.cols + k]) * dense[n * w.cols + k];
        s += p, a += std::fabs(p);
      }
      y[i * w.rows + n] = s, mag[i * w.rows + n] = a;
    }
}

// Launches a (its output set up here: y poisoned first, or a copy of residual_in to add into) and
// reads the output back; the split counters must be left zero.
template <typename Launch>
std::vector<float> launch_and_read(W4GemmArgs a, W4Output output, const std::vector<float>& residual_in,
                                   const DeviceArray<uint32_t>& counters, Launch launch) {
  a.output = output;
  std::vector<float> out;
  if (output == W4Output::kBf16) {
    DeviceArray<__nv_bfloat16> y(static_cast<size_t>(a.m) * a.w.n);
    y.poison();
    a.y = y.get();
    launch(a);
    out = to_float(y.download());
  } else {
    DeviceArray<float> r(residual_in);
    a.residual = r.get();
    launch(a);
    out = r.download();
  }
  for (uint32_t c : counters.download()) EXPECT_EQ(c, 0u) << "a counter was left non-zero";
  return out;
}

std::vector<float> run(const DeviceLayer& layer, const DeviceArray<__nv_bfloat16>& x, int m, int splits,
                       W4Output output, const std::vector<float>& residual_in) {
  const int32_t n = layer.w.n, k = layer.w.k;
  const int32_t used = w4_gemm_launch_splits(m, n, k, splits);
  DeviceArray<float> partials(std::max<size_t>(1, w4_gemm_workspace_floats(m, n, std::max(used, 2)) * 2));
  DeviceArray<uint32_t> counters(w4_gemm_counters(n));
  check_cuda(cudaMemset(counters.get(), 0, counters.size() * 4), "test memset");
  W4GemmArgs a;
  a.w = layer.w;
  a.x = x.get();
  a.m = m;
  a.splits = splits;
  a.partials = partials.get();
  a.counters = counters.get();
  return launch_and_read(a, output, residual_in, counters,
                         [](const W4GemmArgs& b) { check_cuda(launch_w4_gemm(b, nullptr), "launch_w4_gemm"); });
}

// got against the float64 reference: within float32 accumulation's error of the products'
// magnitude, and bf16's rounding for a bf16 output; the residual output adds base.
void expect_matches(const std::vector<float>& got, const std::vector<double>& ref, const std::vector<double>& mag,
                    const std::vector<float>& base, W4Output output, const std::string& what) {
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    const double want = ref[i] + (output == W4Output::kAddToResidual ? base[i] : 0.0);
    const double tol = 1e-5 * mag[i] + 1e-6 + (output == W4Output::kBf16 ? std::fabs(want) / 128 : 1e-6);
    if (!(std::fabs(got[i] - want) <= tol)) {
      ++bad;
      ADD_FAILURE() << what << (output == W4Output::kBf16 ? " bf16" : " residual") << " at " << i << ": got "
                    << got[i] << " want " << want << " tol " << tol;
    }
  }
}

TEST(W4Gemm, MatchesFloat64AtOddSizes) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(7);
  const std::vector<Case> cases = {
      {16, 64, 64, false, true},      {48, 192, 64, false, false},  {48, 192, 64, true, false},
      {80, 320, -1, false, false},    {112, 4224, 128, false, true}, {112, 4224, 128, true, false},
      {4112, 576, 64, false, false},  {32, 14336, 128, true, true},
  };
  for (const Case& c : cases) {
    const IntWeight w = random_weight(c, rng);
    const Int4Tiles tiles = quant::make_int4_tiles(w);
    const DeviceLayer layer(tiles);
    for (int m : {1, 3, 8, 9, 16, 17, 33, 64}) {
      std::vector<float> x = random_floats(static_cast<size_t>(m) * c.k, rng);
      for (float& v : x) v = round_bf16(v);
      const DeviceArray<__nv_bfloat16> dx(to_bf16(x));
      std::vector<double> ref, mag;
      reference(w, x, m, ref, mag);
      for (int splits : {1, 3, 0}) {
        for (W4Output output : {W4Output::kBf16, W4Output::kAddToResidual}) {
          const std::vector<float> base = random_floats(static_cast<size_t>(m) * c.n, rng);
          expect_matches(run(layer, dx, m, splits, output, base), ref, mag, base, output, describe(c, m, splits));
        }
      }
    }
  }
}

TEST(W4Gemm, SameBitsEveryRun) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(11);
  const Case c{4096, 4096, 128, false, false};
  const IntWeight w = random_weight(c, rng);
  const DeviceLayer layer(quant::make_int4_tiles(w));
  for (int m : {1, 16}) {
    const std::vector<float> x = random_floats(static_cast<size_t>(m) * c.k, rng);
    const DeviceArray<__nv_bfloat16> dx(to_bf16(x));
    const std::vector<float> first = run(layer, dx, m, 0, W4Output::kBf16, {});
    for (int i = 0; i < 3; ++i) EXPECT_EQ(run(layer, dx, m, 0, W4Output::kBf16, {}), first) << "m=" << m;
  }
}

TEST(W4Gemm, DequantizesInPackedOrderAndPermutesX) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(5);
  for (const Case& c : {Case{48, 192, 64, true, false}, Case{112, 4224, 128, false, true}, Case{32, 320, -1, false, false}}) {
    const IntWeight w = random_weight(c, rng);
    const Int4Tiles tiles = quant::make_int4_tiles(w);
    const DeviceLayer layer(tiles);
    DeviceArray<__nv_bfloat16> out(static_cast<size_t>(c.n) * c.k);
    out.poison();
    check_cuda(launch_w4_dequantize(layer.w, out.get(), nullptr), "launch_w4_dequantize");
    const std::vector<float> got = to_float(out.download());
    const std::vector<float> dense = w.to_dense();
    auto original = [&](int kp) { return tiles.perm.empty() ? kp : tiles.perm[kp]; };
    for (int n = 0; n < c.n; ++n)
      for (int kp = 0; kp < c.k; ++kp)
        ASSERT_EQ(got[static_cast<size_t>(n) * c.k + kp], round_bf16(dense[static_cast<size_t>(n) * c.k + original(kp)]))
            << "n=" << n << " k'=" << kp << " k=" << c.k;
    if (tiles.perm.empty()) continue;
    const int m = 3;
    const std::vector<float> x = random_floats(static_cast<size_t>(m) * c.k, rng);
    const DeviceArray<__nv_bfloat16> dx(to_bf16(x));
    DeviceArray<__nv_bfloat16> px(x.size());
    check_cuda(launch_w4_permute(dx.get(), layer.w.perm, px.get(), m, c.k, nullptr), "launch_w4_permute");
    const std::vector<float> permuted = to_float(px.download());
    for (int i = 0; i < m; ++i)
      for (int kp = 0; kp < c.k; ++kp)
        ASSERT_EQ(permuted[static_cast<size_t>(i) * c.k + kp], round_bf16(x[static_cast<size_t>(i) * c.k + original(kp)]));
  }
}

// The weights as the wide kernel uses them: bf16(bf16(q − zero) · bf16(scale)).
std::vector<float> wide_dense(IntWeight w) {
  for (float& s : w.scale) s = round_bf16(s);
  std::vector<float> dense = w.to_dense();  // (q − zero) · bf16(scale), exact in float32
  for (float& v : dense) v = round_bf16(v);
  return dense;
}

// launch_w4_gemm_wide (warpgroup MMA, any m) on x already in packed order.
std::vector<float> run_wide(const DeviceLayer& layer, const DeviceArray<__nv_bfloat16>& x, int m, int splits,
                            W4Output output, const std::vector<float>& residual_in, int tokens = 0) {
  const int32_t n = layer.w.n, k = layer.w.k;
  const int32_t tile = tokens > 0 ? tokens : w4_gemm_wide_tokens(m);
  const int32_t used = splits > 0 ? splits : w4_gemm_wide_splits(m, n, k, tile);
  DeviceArray<float> partials(std::max<size_t>(1, w4_gemm_wide_workspace_floats(m, n, used, tile)));
  DeviceArray<uint32_t> counters(w4_gemm_wide_counters(m, n, tile));
  check_cuda(cudaMemset(counters.get(), 0, counters.size() * 4), "test memset");
  W4GemmArgs a;
  a.w = layer.w;
  a.m = m;
  a.splits = splits;
  a.wide_tokens = tokens;
  a.partials = partials.get();
  a.counters = counters.get();
  DeviceArray<__nv_bfloat16> packed(static_cast<size_t>(m) * k);
  a.x = x.get();
  if (layer.w.perm != nullptr) {
    check_cuda(launch_w4_permute(x.get(), layer.w.perm, packed.get(), m, k, nullptr), "launch_w4_permute");
    a.x = packed.get();
  }
  return launch_and_read(a, output, residual_in, counters, [](const W4GemmArgs& b) {
    check_cuda(launch_w4_gemm_wide(b, nullptr), "launch_w4_gemm_wide");
  });
}

// The float64 bars of the small-row kernel against the weights as the wide kernel rounds them
// (wide_dense: Marlin's bf16 arithmetic), with both tiles of x rows (128 and 256). Row counts
// around the tiles: 1, 65, 127, 128, 129, 300.
TEST(W4GemmWide, MatchesFloat64AtOddSizes) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(17);
  const std::vector<Case> cases = {
      {16, 64, 64, false, true},     {48, 192, 64, false, false},   {48, 192, 64, true, false},
      {80, 320, -1, false, false},   {112, 4224, 128, false, true}, {112, 4224, 128, true, false},
      {400, 576, 64, false, false},  {32, 14336, 128, true, true},  {208, 1024, 256, false, false},
  };
  for (const Case& c : cases) {
    const IntWeight w = random_weight(c, rng);
    const DeviceLayer layer(quant::make_int4_tiles(w));
    const std::vector<float> dense = wide_dense(w);
    for (int m : {1, 65, 127, 128, 129, 300}) {
      std::vector<float> x = random_floats(static_cast<size_t>(m) * c.k, rng);
      for (float& v : x) v = round_bf16(v);
      const DeviceArray<__nv_bfloat16> dx(to_bf16(x));
      std::vector<double> ref, mag;
      reference(w, x, m, ref, mag, dense);
      for (int tokens : {128, 256})
        for (int splits : {1, 3, 0})
          for (W4Output output : {W4Output::kBf16, W4Output::kAddToResidual}) {
            const std::vector<float> base = random_floats(static_cast<size_t>(m) * c.n, rng);
            expect_matches(run_wide(layer, dx, m, splits, output, base, tokens), ref, mag, base, output,
                           describe(c, m, splits) + " wide " + std::to_string(tokens));
          }
    }
  }
}

TEST(W4GemmWide, SameBitsEveryRun) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(19);
  const Case c{4096, 4096, 128, false, false};
  const IntWeight w = random_weight(c, rng);
  const DeviceLayer layer(quant::make_int4_tiles(w));
  const int m = 200;
  const std::vector<float> x = random_floats(static_cast<size_t>(m) * c.k, rng);
  const DeviceArray<__nv_bfloat16> dx(to_bf16(x));
  for (int tokens : {128, 256})
    for (int splits : {1, 0}) {
      const std::vector<float> first = run_wide(layer, dx, m, splits, W4Output::kBf16, {}, tokens);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(run_wide(layer, dx, m, splits, W4Output::kBf16, {}, tokens), first);
    }
}

TEST(W4GemmWide, SplitRule) {
  EXPECT_EQ(w4_gemm_wide_split_rule(132, 64, 132), 1);  // the tiles fill the SMs
  EXPECT_EQ(w4_gemm_wide_split_rule(500, 64, 132), 1);
  EXPECT_EQ(w4_gemm_wide_split_rule(48, 64, 132), 2);   // qkv of 8B at 128 rows
  EXPECT_EQ(w4_gemm_wide_split_rule(32, 64, 132), 4);   // o
  EXPECT_EQ(w4_gemm_wide_split_rule(32, 224, 132), 4);  // down
  EXPECT_EQ(w4_gemm_wide_split_rule(1, 64, 132), 16);   // at least 4 steps a split
  EXPECT_EQ(w4_gemm_wide_split_rule(1, 7, 132), 1);
}

TEST(W4Gemm, RefusesWhatTheLayoutCannotHold) {
  W4GemmArgs a;
  a.m = 1;
  EXPECT_EQ(launch_w4_gemm(a, nullptr), cudaErrorInvalidValue);  // no weights, no x
  EXPECT_EQ(launch_w4_gemm_wide(a, nullptr), cudaErrorInvalidValue);
  a.m = 65;
  EXPECT_EQ(launch_w4_gemm(a, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
