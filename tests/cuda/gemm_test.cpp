// The cuBLASLt wrapper: y = x · W^T at odd sizes, bf16 and float32 outputs, against float64.
#include <gtest/gtest.h>

#include "gpu/cuda/gemm.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

TEST(CudaGemm, LinearMatchesFloat64AtOddSizes) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(5);
  Gemm gemm;
  for (const auto& [M, N, K] : {std::tuple{17, 97, 136}, std::tuple{1, 54, 64}, std::tuple{97, 17, 200}}) {
    const std::vector<float> x = random_floats(static_cast<size_t>(M) * K, rng);
    const std::vector<float> w = random_floats(static_cast<size_t>(N) * K, rng);
    std::vector<double> ref(static_cast<size_t>(M) * N);
    for (int m = 0; m < M; ++m) {
      for (int n = 0; n < N; ++n) {
        double s = 0;
        for (int k = 0; k < K; ++k) s += static_cast<double>(round_bf16(x[m * K + k])) * round_bf16(w[n * K + k]);
        ref[m * N + n] = s;
      }
    }
    DeviceArray<__nv_bfloat16> d_x(to_bf16(x)), d_w(to_bf16(w)), d_y(static_cast<size_t>(M) * N);
    DeviceArray<float> d_yf(static_cast<size_t>(M) * N);
    d_y.poison();
    d_yf.poison();
    gemm.linear(d_x.get(), d_w.get(), d_y.get(), M, N, K, nullptr);
    gemm.linear_f32_out(d_x.get(), d_w.get(), d_yf.get(), M, N, K, nullptr);
    EXPECT_LT(relative_error(to_float(d_y.download()), ref), 5e-3) << M << "x" << N << "x" << K;
    EXPECT_LT(relative_error(d_yf.download(), ref), 1e-5) << M << "x" << N << "x" << K;
    // Same shape again: served from the plan cache, same answer.
    gemm.linear_f32_out(d_x.get(), d_w.get(), d_yf.get(), M, N, K, nullptr);
    EXPECT_LT(relative_error(d_yf.download(), ref), 1e-5);
  }
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
