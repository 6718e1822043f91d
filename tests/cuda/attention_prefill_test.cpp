// Prefill attention kernels (the Hopper wgmma kernel and the mma.sync fallback) against float64
// on the host, on tiles of kPrefillTileQueries queries: a varlen batch with cached prefixes and
// odd lengths (17, 97, 129, 300), GQA, shuffled physical blocks of 8 to 64 keys, with and without
// a sliding window, and one long sequence that wraps the K/V ring many times.
#include <gtest/gtest.h>

#include <tuple>

#include "gpu/cuda/attention.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/paged_attention_problem.h"

namespace zinfer::gpu::cuda::test {
namespace {

using Launch = cudaError_t (*)(const PagedKv&, const int32_t*, int32_t, cudaStream_t);

// Runs one kernel on the problem and returns its output.
std::vector<float> run(const Problem& p, Launch launch) {
  DeviceProblem dp(p);
  dp.out.poison();
  check_cuda(launch(dp.kv, dp.tiles.get(), static_cast<int32_t>(p.tiles.size() / 3), nullptr), "prefill attention");
  return to_float(dp.out.download());
}

// Cached prefixes of 0 to 200 keys, chunks of 1 to 300 queries (one to three tiles; a tile of
// 17 leaves the second warpgroup of the Hopper kernel without queries).
const std::vector<SeqSpec> kBatch = {{0, 300}, {54, 17}, {7, 97}, {200, 129}, {16, 64}, {130, 1}};

TEST(CudaPrefillAttentionSm90, MatchesFloat64AcrossBlockSizes) {
  ZINFER_REQUIRE_CUDA();
  for (int bs : {8, 16, 32, 64}) {
    const Problem p = make_problem(8, 2, 128, kBatch, 101 + bs, 0, bs);
    const std::vector<double> ref = reference(p);
    EXPECT_LT(relative_error(run(p, launch_prefill_attention_sm90), ref), 1e-2) << "block_size " << bs;
    if (bs == 16) {
      EXPECT_LT(relative_error(run(p, launch_prefill_attention_mma), ref), 1e-2) << "mma.sync";
    }
  }
}

TEST(CudaPrefillAttentionSm90, MatchesFloat64WithSlidingWindow) {
  ZINFER_REQUIRE_CUDA();
  // Windows below, at and above the key tile (128) and the block sizes.
  for (int window : {17, 100, 128, 200}) {
    for (int bs : {16, 32}) {
      const Problem p = make_problem(8, 2, 128, kBatch, 211 + bs + window, window, bs);
      const std::vector<double> ref = reference(p);
      EXPECT_LT(relative_error(run(p, launch_prefill_attention_sm90), ref), 1e-2)
          << "window " << window << " block_size " << bs;
      EXPECT_LT(relative_error(run(p, launch_prefill_attention_mma), ref), 1e-2)
          << "mma.sync window " << window << " block_size " << bs;
    }
  }
}

TEST(CudaPrefillAttentionSm90, MatchesFloat64OnLongSequences) {
  ZINFER_REQUIRE_CUDA();
  // 9 key tiles per late query tile: the 3-stage ring wraps three times; MHA and GQA 4:1.
  for (const auto& [Hq, Hkv, window] : {std::tuple{4, 4, 0}, std::tuple{4, 1, 0}, std::tuple{4, 1, 300}}) {
    const Problem p = make_problem(Hq, Hkv, 128, {{54, 1100}}, 307 + Hkv + window, window, 16);
    const std::vector<double> ref = reference(p);
    EXPECT_LT(relative_error(run(p, launch_prefill_attention_sm90), ref), 1e-2)
        << "Hq " << Hq << " Hkv " << Hkv << " window " << window;
  }
}

TEST(CudaPrefillAttentionSm90, DispatchCoversHeadDim64WithTheFallback) {
  ZINFER_REQUIRE_CUDA();
  const Problem p = make_problem(6, 3, 64, kBatch, 401, 0, 16);
  EXPECT_LT(relative_error(run(p, launch_prefill_attention), reference(p)), 1e-2);
}

TEST(CudaPrefillAttentionSm90, SupportsHeadDim128WithPowerOfTwoBlocksUpToTheKeyTile) {
  PagedKv kv;
  kv.head_dim = 128;
  for (int bs : {4, 8, 16, 32, 64, 128}) {
    kv.block_size = bs;
    EXPECT_TRUE(prefill_attention_sm90_supports(kv)) << bs;
  }
  for (int bs : {1, 2, 24, 48, 256}) {
    kv.block_size = bs;
    EXPECT_FALSE(prefill_attention_sm90_supports(kv)) << bs;
  }
  kv.block_size = 16;
  kv.head_dim = 64;
  EXPECT_FALSE(prefill_attention_sm90_supports(kv));
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
