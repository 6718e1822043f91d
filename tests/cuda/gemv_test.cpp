// The skinny GEMV and its fused variants (RMSNorm prologue; residual-add and SiLU·mul epilogues)
// against float64 on the host, at odd sizes and every row count 1..8, for each of its two kernels
// (16-byte loads into registers; bulk copies into a ring per warp, where it fits), which must
// also agree with each other bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/cuda/gemv.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

struct Shape {
  int m, n, k;
};

// The shapes: tiny, odd, above one batch per row (4104 = whole batches and a one-chunk tail in
// both kernels; with 2 outputs per warp the ring wraps), the down projection's k = 14336, whose 8 padded rows
// need 224 KB of shared memory (register kernel only), and the longest rows the ring takes at 1
// and 2 rows (25 and 13 2-KB batches per row through 4 slots: the slots' barriers go round several
// phases).
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (int m = 1; m <= kGemvMaxRows; ++m) {
    for (auto [n, k] : {std::pair{17, 8}, {97, 136}, {4099, 4104}, {54, 4104}, {4099, 8}}) out.push_back({m, n, k});
  }
  out.push_back({7, 17, 14336});
  out.push_back({1, 97, 14336});
  out.push_back({2, 301, 12464});
  out.push_back({1, 301, 24936});
  return out;
}

// The kernels that take the shape: the register kernel always, the bulk-copy ring where it fits.
std::vector<GemvStreaming> kernels_for(const Shape& s) {
  std::vector<GemvStreaming> out{GemvStreaming::kRegisters};
  if (gemv_ring_fits(s.m, s.k)) out.push_back(GemvStreaming::kBulkRing);
  return out;
}

std::string describe(const Shape& s, GemvStreaming kernel) {
  return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (kernel == GemvStreaming::kBulkRing ? " ring" : " registers");
}

// Calls run(description) with a.streaming set to each kernel that takes the shape (run launches,
// checks against the reference and returns the output) and checks that the kernels agree bit for bit.
template <typename Run>
void for_each_kernel(const Shape& s, GemvArgs& a, Run&& run) {
  std::vector<float> first;
  for (GemvStreaming kernel : kernels_for(s)) {
    a.streaming = kernel;
    const std::vector<float> out = run(describe(s, kernel));
    if (first.empty()) first = out;
    EXPECT_EQ(out, first) << describe(s, kernel) << ": the kernels differ";
  }
}

// y[m, n] = sum_k x[m, k] w[n, k] in float64.
std::vector<double> reference_gemv(const std::vector<double>& x, const std::vector<float>& w, const Shape& s) {
  std::vector<double> y(static_cast<size_t>(s.m) * s.n);
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int c = 0; c < s.k; ++c) acc += x[static_cast<size_t>(i) * s.k + c] * w[static_cast<size_t>(j) * s.k + c];
      y[static_cast<size_t>(i) * s.n + j] = acc;
    }
  }
  return y;
}

// x as the norm prologue forms it: rmsnorm.cu's float32 arithmetic (inv_rms from a float64 sum of
// squares, which differs from the device's float32 sum only far below a bf16 step), rounded to bf16.
std::vector<double> normed_rows(const std::vector<float>& residual, const std::vector<float>& norm_w, int m, int k,
                                float eps) {
  std::vector<double> x(static_cast<size_t>(m) * k);
  for (int i = 0; i < m; ++i) {
    const float* r = residual.data() + static_cast<size_t>(i) * k;
    double ss = 0;
    for (int c = 0; c < k; ++c) ss += static_cast<double>(r[c]) * r[c];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / k + eps));
    for (int c = 0; c < k; ++c) x[static_cast<size_t>(i) * k + c] = round_bf16(r[c] * inv * norm_w[c]);
  }
  return x;
}

TEST(CudaGemv, SupportsOnlyFewRowsAndWholeChunks) {
  ZINFER_REQUIRE_CUDA();
  EXPECT_TRUE(gemv_supports(1, 8));
  EXPECT_TRUE(gemv_supports(8, 14336));   // Llama-3-8B's down projection
  EXPECT_FALSE(gemv_supports(9, 4096));
  EXPECT_FALSE(gemv_supports(0, 4096));
  EXPECT_FALSE(gemv_supports(1, 4100));    // not a multiple of 8
  EXPECT_FALSE(gemv_supports(8, 16384));   // 256 KB of x does not fit in shared memory
}

// x must leave the ring its 8 KB per warp, with two blocks per SM (228 KB per SM).
TEST(CudaGemv, RingFitsWhereXLeavesTheRingRoom) {
  ZINFER_REQUIRE_CUDA();
  EXPECT_TRUE(gemv_ring_fits(1, 4096));
  EXPECT_TRUE(gemv_ring_fits(1, 14336));   // the down projection at batch 1
  EXPECT_TRUE(gemv_ring_fits(2, 4096));
  EXPECT_FALSE(gemv_ring_fits(2, 14336));  // 56 KB of x
  EXPECT_TRUE(gemv_ring_fits(4, 4096));
  EXPECT_FALSE(gemv_ring_fits(8, 4096));   // 64 KB of x
  EXPECT_FALSE(gemv_ring_fits(1, 4100));   // not a supported shape at all
  GemvArgs a;
  a.streaming = GemvStreaming::kBulkRing;
  a.m = 8, a.n = 16, a.k = 4096;
  EXPECT_EQ(launch_gemv(a, nullptr), cudaErrorInvalidValue);
}

// kAuto: the ring at one row where it fits, the register kernel at more rows or longer rows.
TEST(CudaGemv, AutoStreamsOneRowThroughTheRing) {
  ZINFER_REQUIRE_CUDA();
  EXPECT_EQ(gemv_auto_streaming(1, 4096), GemvStreaming::kBulkRing);
  EXPECT_EQ(gemv_auto_streaming(1, 14336), GemvStreaming::kBulkRing);
  EXPECT_EQ(gemv_auto_streaming(1, 32768), GemvStreaming::kRegisters);  // 64 KB of x
  EXPECT_EQ(gemv_auto_streaming(2, 4096), GemvStreaming::kRegisters);
  EXPECT_EQ(gemv_auto_streaming(8, 8), GemvStreaming::kRegisters);
}

// Invariant 18 (docs/architecture.md): the step's shape picks the kernel, and every choice computes the same function.
TEST(CudaGemv, PlainMatchesFloat64) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(11);
  for (const Shape& s : shapes()) {
    const std::vector<float> x = random_floats(static_cast<size_t>(s.m) * s.k, rng);
    const std::vector<float> w = to_float(to_bf16(random_floats(static_cast<size_t>(s.n) * s.k, rng, 0.05f)));
    std::vector<double> xd(x.size());
    for (size_t i = 0; i < x.size(); ++i) xd[i] = round_bf16(x[i]);
    const std::vector<double> ref = reference_gemv(xd, w, s);
    DeviceArray<__nv_bfloat16> d_x(to_bf16(x)), d_w(to_bf16(w)), d_y(ref.size());
    GemvArgs a;
    a.x = d_x.get();
    a.w = d_w.get();
    a.y_bf16 = d_y.get();
    a.m = s.m, a.n = s.n, a.k = s.k;
    for_each_kernel(s, a, [&](const std::string& what) {
      d_y.poison();
      check_cuda(launch_gemv(a, nullptr), "gemv");
      const std::vector<float> y = to_float(d_y.download());
      EXPECT_LT(relative_error(y, ref), 3e-3) << what;  // bf16 output
      return y;
    });
  }
}

TEST(CudaGemv, RmsNormPrologueMatchesFloat64) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(12);
  const float eps = 1e-5f;
  for (const Shape& s : shapes()) {
    const std::vector<float> residual = random_floats(static_cast<size_t>(s.m) * s.k, rng, 2.f);
    const std::vector<float> norm_w = random_floats(s.k, rng);
    const std::vector<float> w = to_float(to_bf16(random_floats(static_cast<size_t>(s.n) * s.k, rng, 0.05f)));
    const std::vector<double> ref = reference_gemv(normed_rows(residual, norm_w, s.m, s.k, eps), w, s);
    DeviceArray<float> d_res(residual), d_nw(norm_w);
    DeviceArray<__nv_bfloat16> d_w(to_bf16(w)), d_y(ref.size());
    GemvArgs a;
    a.input = GemvInput::kRmsNorm;
    a.norm_residual = d_res.get();
    a.norm_weight = d_nw.get();
    a.norm_eps = eps;
    a.w = d_w.get();
    a.y_bf16 = d_y.get();
    a.m = s.m, a.n = s.n, a.k = s.k;
    for_each_kernel(s, a, [&](const std::string& what) {
      d_y.poison();
      check_cuda(launch_gemv(a, nullptr), "gemv norm");
      const std::vector<float> y = to_float(d_y.download());
      EXPECT_LT(relative_error(y, ref), 3e-3) << what;  // bf16 output
      EXPECT_EQ(d_res.download(), residual) << what;    // read only
      return y;
    });
  }
}

// gate_up with s.n gate rows then s.n up rows: act = silu(bf16(gate)) * bf16(up), as silu_mul.cu.
TEST(CudaGemv, SiluMulEpilogueOfGateUpPairsMatchesFloat64) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(13);
  const float eps = 1e-6f;
  for (const Shape& s : shapes()) {
    const Shape gate_up{s.m, 2 * s.n, s.k};
    const std::vector<float> residual = random_floats(static_cast<size_t>(s.m) * s.k, rng, 2.f);
    const std::vector<float> norm_w = random_floats(s.k, rng);
    const std::vector<float> w = to_float(to_bf16(random_floats(static_cast<size_t>(gate_up.n) * s.k, rng, 0.05f)));
    const std::vector<double> y = reference_gemv(normed_rows(residual, norm_w, s.m, s.k, eps), w, gate_up);
    std::vector<double> ref(static_cast<size_t>(s.m) * s.n);
    for (int i = 0; i < s.m; ++i) {
      for (int j = 0; j < s.n; ++j) {
        const double g = round_bf16(static_cast<float>(y[static_cast<size_t>(i) * gate_up.n + j]));
        const double u = round_bf16(static_cast<float>(y[static_cast<size_t>(i) * gate_up.n + s.n + j]));
        ref[static_cast<size_t>(i) * s.n + j] = g / (1 + std::exp(-g)) * u;
      }
    }
    DeviceArray<float> d_res(residual), d_nw(norm_w);
    DeviceArray<__nv_bfloat16> d_w(to_bf16(w)), d_act(ref.size());
    GemvArgs a;
    a.input = GemvInput::kRmsNorm;
    a.output = GemvOutput::kSiluMul;
    a.norm_residual = d_res.get();
    a.norm_weight = d_nw.get();
    a.norm_eps = eps;
    a.w = d_w.get();
    a.y_bf16 = d_act.get();
    a.m = s.m, a.n = gate_up.n, a.k = s.k;
    for_each_kernel(s, a, [&](const std::string& what) {
      d_act.poison();
      check_cuda(launch_gemv(a, nullptr), "gemv silu");
      const std::vector<float> act = to_float(d_act.download());
      EXPECT_LT(relative_error(act, ref), 5e-3) << what;  // bf16 gate, up, output
      return act;
    });
  }
}

TEST(CudaGemv, RejectsOddGateUpAndUnsupportedShapes) {
  ZINFER_REQUIRE_CUDA();
  GemvArgs a;
  a.input = GemvInput::kRmsNorm;
  a.output = GemvOutput::kSiluMul;
  a.m = 1, a.n = 17, a.k = 8;  // gate and up rows must pair up
  EXPECT_EQ(launch_gemv(a, nullptr), cudaErrorInvalidValue);
  a.output = GemvOutput::kBf16;
  a.m = 9, a.n = 16;
  EXPECT_EQ(launch_gemv(a, nullptr), cudaErrorInvalidValue);
}

// Invariant 20 (docs/architecture.md): the residual stream is float32.
TEST(CudaGemv, ResidualEpilogueMatchesFloat64AndIsDeterministic) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(14);
  for (const Shape& s : shapes()) {
    const std::vector<float> x = random_floats(static_cast<size_t>(s.m) * s.k, rng);
    const std::vector<float> w = to_float(to_bf16(random_floats(static_cast<size_t>(s.n) * s.k, rng, 0.05f)));
    const std::vector<float> residual = random_floats(static_cast<size_t>(s.m) * s.n, rng);
    std::vector<double> xd(x.size());
    for (size_t i = 0; i < x.size(); ++i) xd[i] = round_bf16(x[i]);
    const std::vector<double> ref = reference_gemv(xd, w, s);
    DeviceArray<__nv_bfloat16> d_x(to_bf16(x)), d_w(to_bf16(w));
    DeviceArray<float> d_res(residual), d_res2(residual);
    GemvArgs a;
    a.output = GemvOutput::kAddToResidual;
    a.x = d_x.get();
    a.w = d_w.get();
    a.m = s.m, a.n = s.n, a.k = s.k;
    for_each_kernel(s, a, [&](const std::string& what) {
      d_res.upload(residual);
      d_res2.upload(residual);
      a.residual_out = d_res.get();
      check_cuda(launch_gemv(a, nullptr), "gemv residual");
      a.residual_out = d_res2.get();
      check_cuda(launch_gemv(a, nullptr, /*programmatic_launch=*/false), "gemv residual");
      const std::vector<float> out = d_res.download(), out2 = d_res2.download();
      std::vector<float> delta(out.size());
      for (size_t i = 0; i < out.size(); ++i) delta[i] = out[i] - residual[i];
      EXPECT_EQ(out, out2) << what << ": programmatic and serial launches differ";
      EXPECT_LT(relative_error(delta, ref), 3e-3) << what;
      return out;
    });
  }
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
