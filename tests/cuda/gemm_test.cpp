// The cuBLASLt wrapper: y = x · W^T at odd sizes, bf16 and float32 outputs, against float64; the
// start-up tuning and its cache file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

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

namespace zinfer::gpu::cuda::test {
namespace {

// Invariant 18 (docs/architecture.md): whichever tuned algorithm a row count gets, the product is
// the same function. After the start-up tuning at a few row counts, products at row counts that were not tuned
// take a tuned neighbour's algorithm (or the heuristic's): still correct, and the accumulating
// float32 form adds to y.
TEST(CudaGemm, UntunedRowCountsReuseTunedAlgorithms) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(7);
  const int N = 72, K = 264, MaxM = 130;
  const std::vector<float> w = random_floats(static_cast<size_t>(N) * K, rng);
  DeviceArray<__nv_bfloat16> d_w(to_bf16(w));
  Gemm gemm;
  GemmTuningCache no_file("", "");
  const GemmTuneReport report =
      gemm.tune({GemmShape{N, K, false, false, d_w.get(), MaxM, {8, 64}}, GemmShape{N, K, true, true, d_w.get(), MaxM, {}}},
                no_file, nullptr);
  EXPECT_EQ(report.products, 2 + static_cast<int>(Gemm::tuning_buckets(MaxM).size()));
  EXPECT_EQ(report.timed, report.products);
  for (int M : {1, 5, 37, 100, 130}) {
    const std::vector<float> x = random_floats(static_cast<size_t>(M) * K, rng);
    std::vector<double> ref(static_cast<size_t>(M) * N);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double s = 0;
        for (int k = 0; k < K; ++k) s += static_cast<double>(round_bf16(x[m * K + k])) * round_bf16(w[n * K + k]);
        ref[m * N + n] = s;
      }
    DeviceArray<__nv_bfloat16> d_x(to_bf16(x)), d_y(static_cast<size_t>(M) * N);
    d_y.poison();
    gemm.linear(d_x.get(), d_w.get(), d_y.get(), M, N, K, nullptr);
    EXPECT_LT(relative_error(to_float(d_y.download()), ref), 5e-3) << "M " << M;
    std::vector<float> ones(static_cast<size_t>(M) * N, 1.0f);
    DeviceArray<float> d_acc(ones);
    gemm.linear_add_f32(d_x.get(), d_w.get(), d_acc.get(), M, N, K, nullptr);
    std::vector<double> ref_plus_one = ref;
    for (double& v : ref_plus_one) v += 1.0;
    EXPECT_LT(relative_error(d_acc.download(), ref_plus_one), 1e-5) << "M " << M;
  }
}

TEST(GemmTuning, BucketsCoverEveryRowCountUpToTheMost) {
  EXPECT_EQ(Gemm::tuning_buckets(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(Gemm::tuning_buckets(6), (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_EQ(Gemm::tuning_buckets(64), (std::vector<int64_t>{1, 2, 4, 8, 16, 20, 24, 28, 32, 40, 48, 56, 64}));
  const std::vector<int64_t> b = Gemm::tuning_buckets(8192);
  EXPECT_EQ(b.back(), 8192);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
  EXPECT_EQ(std::adjacent_find(b.begin(), b.end()), b.end());  // no row count twice
}

// The tuning cache file (no GPU needed): entries survive a save and a reload for the same device
// key, a file written for another device or library version is ignored, and nothing is written
// without a path.
TEST(GemmTuning, CacheFileRoundTripsAndIsKeyedByDevice) {
  const std::string dir = std::string(ZINFER_BINARY_DIR) + "/tests/cuda/tuning-cache-test";
  std::filesystem::remove_all(dir);
  const std::string path = GemmTuningCache::default_path(dir, "GPU A, cuBLASLt 1");
  ASSERT_FALSE(path.empty());
  EXPECT_NE(path, GemmTuningCache::default_path(dir, "GPU A, cuBLASLt 2"));
  EXPECT_EQ(GemmTuningCache::default_path("off", "GPU A"), "");
  cublasLtMatmulAlgo_t a{}, b{};
  for (int i = 0; i < 8; ++i) {
    a.data[i] = 0x1234567890abcdefull + i;
    b.data[i] = ~uint64_t(i);
  }
  const GemmTuneKey ka{8, 6144, 4096, false, false}, kb{8, 4096, 4096, true, true};
  {
    GemmTuningCache cache(path, "GPU A, cuBLASLt 1");
    EXPECT_EQ(cache.loaded(), 0u);
    cache.put(ka, a);
    cache.put(kb, b);
    ASSERT_TRUE(cache.save());
  }
  GemmTuningCache again(path, "GPU A, cuBLASLt 1");
  EXPECT_EQ(again.loaded(), 2u);
  cublasLtMatmulAlgo_t got{};
  ASSERT_TRUE(again.find(ka, &got));
  EXPECT_EQ(std::memcmp(got.data, a.data, sizeof(a.data)), 0);
  ASSERT_TRUE(again.find(kb, &got));
  EXPECT_EQ(std::memcmp(got.data, b.data, sizeof(b.data)), 0);
  EXPECT_FALSE(again.find(GemmTuneKey{8, 6144, 4096, false, true}, &got));  // accumulate is part of the key
  GemmTuningCache other(path, "GPU B, cuBLASLt 1");  // same file, another device
  EXPECT_EQ(other.loaded(), 0u);
  GemmTuningCache none("", "GPU A");
  none.put(ka, a);
  EXPECT_TRUE(none.save());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
