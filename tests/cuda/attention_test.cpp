// Paged attention (prefill tiles on tensor cores, split-K decode) against float64 on the host:
// a varlen batch with cached prefixes, GQA, scattered physical blocks, odd lengths, with and
// without a sliding window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "gpu/cpu/ops.h"
#include "gpu/cuda/attention.h"
#include "gpu/cuda/gemv.h"
#include "gpu/cuda/qkv_rope.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/paged_attention_problem.h"

namespace zinfer::gpu::cuda::test {
namespace {

const std::vector<SeqSpec> kBatch = {{0, 97}, {54, 17}, {130, 1}, {16, 64}, {7, 1}, {200, 129}};

TEST(CudaPrefillAttention, MatchesFloat64OnVarlenBatchWithPrefixes) {
  ZINFER_REQUIRE_CUDA();
  for (const auto& [Hq, Hkv, D] : {std::tuple{8, 2, 128}, std::tuple{6, 6, 64}, std::tuple{12, 3, 128}}) {
    const Problem p = make_problem(Hq, Hkv, D, kBatch, 11 + D + Hq);
    DeviceProblem dp(p);
    dp.out.poison();
    check_cuda(launch_prefill_attention(dp.kv, dp.tiles.get(), static_cast<int32_t>(p.tiles.size() / 3), nullptr),
               "prefill attention");
    const std::vector<float> got = to_float(dp.out.download());
    const double err = relative_error(got, reference(p));
    EXPECT_LT(err, 1e-2) << "Hq " << Hq << " Hkv " << Hkv << " D " << D;
  }
}

// Invariant 18 (docs/architecture.md): the step's shape picks the kernel, and every choice computes the same function.
TEST(CudaDecodeAttention, MatchesFloat64WithAndWithoutSplits) {
  ZINFER_REQUIRE_CUDA();
  // 24 and 40 run padded (to 32 and 64).
  for (const auto& [Hq, Hkv, D] : {std::tuple{8, 2, 128}, std::tuple{12, 1, 64}, std::tuple{4, 2, 32},
                                   std::tuple{2, 1, 256}, std::tuple{4, 4, 16}, std::tuple{4, 2, 24},
                                   std::tuple{6, 3, 40}}) {
    const Problem p = make_problem(Hq, Hkv, D, kBatch, 23 + D + Hq);
    DeviceProblem dp(p);
    std::vector<int32_t> tokens(p.T);
    std::iota(tokens.begin(), tokens.end(), 0);
    std::reverse(tokens.begin(), tokens.end());  // list order is independent of row order
    DeviceArray<int32_t> d_tokens(tokens);
    const std::vector<double> ref = reference(p);
    for (int splits : {1, 3, 8}) {
      SplitWorkspace ws(p, splits);
      dp.out.poison();
      const DecodeWork work = ws.work(d_tokens.get(), p.T);
      check_cuda(launch_decode_attention(dp.kv, work, nullptr), "decode attention");
      const double err = relative_error(to_float(dp.out.download()), ref);
      EXPECT_LT(err, 4e-3) << "Hq " << Hq << " Hkv " << Hkv << " D " << D << " splits " << splits;
    }
  }
}

// Sliding-window batches: contexts 97 and 130 (a full prefill of 97, and a chunk of 97 on a
// cached prefix of 33), single decode tokens at contexts 97 and 130, a context shorter than the
// window, and a long one; windows that are and are not a multiple of the key tile (64) or the
// block size (16).
const std::vector<SeqSpec> kWindowBatch = {{0, 97}, {33, 97}, {96, 1}, {129, 1}, {5, 1}, {54, 17}, {200, 129}};
constexpr int kWindows[] = {17, 48, 64, 100};

TEST(CudaAttentionWindow, ReferenceWindowChangesTheResult) {
  // The cases below only test the window if it changes the answer on them.
  const Problem full = make_problem(4, 2, 64, kWindowBatch, 5);
  const std::vector<double> ref_full = reference(full);
  for (int window : kWindows) {
    Problem windowed = full;
    windowed.window = window;
    const std::vector<double> ref_windowed = reference(windowed);
    EXPECT_GT(relative_error(std::vector<float>(ref_windowed.begin(), ref_windowed.end()), ref_full), 0.05)
        << "window " << window;
  }
}

TEST(CudaAttentionWindow, ReferenceMatchesCpuBackend) {
  // The float64 reference applies the same window as the CPU backend (which matches transformers
  // on the mistral fixture): both on the same paged problem.
  for (int window : {0, 17, 48}) {
    const Problem p = make_problem(4, 2, 32, kWindowBatch, 9 + window, window);
    cpu::PagedKvLayer cache;
    std::vector<float> k = p.k, v = p.v;
    cache.k = k.data();
    cache.v = v.data();
    cache.num_blocks = p.num_blocks;
    cache.block_size = p.bs;
    cache.num_kv_heads = p.Hkv;
    cache.head_dim = p.D;
    std::vector<cpu::AttentionSeq> seqs;
    int64_t token_begin = 0;
    for (size_t si = 0; si < p.seqs.size(); ++si) {
      cpu::AttentionSeq a;
      a.token_begin = token_begin;
      a.num_tokens = p.seqs[si].q_len;
      a.start_pos = p.seqs[si].start_pos;
      a.block_table = p.block_tables.data() + p.seq_offset[si];
      a.block_table_len = (a.start_pos + a.num_tokens + p.bs - 1) / p.bs;
      seqs.push_back(a);
      token_begin += a.num_tokens;
    }
    std::vector<float> out(p.q.size());
    cpu::paged_attention(p.q.data(), cache, seqs.data(), static_cast<int64_t>(seqs.size()), p.Hq,
                         1.0f / std::sqrt(static_cast<float>(p.D)), window, out.data());
    EXPECT_LT(relative_error(out, reference(p)), 1e-5) << "window " << window;
  }
}

TEST(CudaPrefillAttention, MatchesFloat64WithSlidingWindow) {
  ZINFER_REQUIRE_CUDA();
  for (int window : kWindows) {
    for (const auto& [Hq, Hkv, D] : {std::tuple{8, 2, 128}, std::tuple{6, 6, 64}}) {
      const Problem p = make_problem(Hq, Hkv, D, kWindowBatch, 31 + D + Hq + window, window);
      DeviceProblem dp(p);
      dp.out.poison();
      check_cuda(launch_prefill_attention(dp.kv, dp.tiles.get(), static_cast<int32_t>(p.tiles.size() / 3), nullptr),
                 "prefill attention");
      const double err = relative_error(to_float(dp.out.download()), reference(p));
      EXPECT_LT(err, 1e-2) << "window " << window << " Hq " << Hq << " Hkv " << Hkv << " D " << D;
    }
  }
}

TEST(CudaDecodeAttention, MatchesFloat64WithSlidingWindowAndSplits) {
  ZINFER_REQUIRE_CUDA();
  for (int window : kWindows) {
    for (const auto& [Hq, Hkv, D] : {std::tuple{8, 2, 128}, std::tuple{4, 1, 16}, std::tuple{4, 2, 24}}) {
      const Problem p = make_problem(Hq, Hkv, D, kWindowBatch, 47 + D + Hq + window, window);
      DeviceProblem dp(p);
      std::vector<int32_t> tokens(p.T);
      std::iota(tokens.begin(), tokens.end(), 0);
      DeviceArray<int32_t> d_tokens(tokens);
      const std::vector<double> ref = reference(p);
      // More splits than the window has 64-key chunks: the kernel must still cover the window once.
      for (int splits : {1, 2, 3, 8}) {
        SplitWorkspace ws(p, splits);
        dp.out.poison();
        const DecodeWork work = ws.work(d_tokens.get(), p.T);
        check_cuda(launch_decode_attention(dp.kv, work, nullptr), "decode attention");
        const double err = relative_error(to_float(dp.out.download()), ref);
        EXPECT_LT(err, 4e-3) << "window " << window << " Hq " << Hq << " Hkv " << Hkv << " D " << D << " splits "
                             << splits;
      }
    }
  }
}

// Block sizes 8..64 and 12 (not a power of two: the page arithmetic's division path), GQA groups
// of 1 (MHA), 7 (a block with 7 of its 8 MMA rows real) and 16 (two blocks of 8 heads per kv head),
// a context of 1,031 keys (each warp's cp.async ring wraps many times) and the 32 splits the
// backend asks for at batch 1.
TEST(CudaDecodeAttention, MatchesFloat64AcrossBlockSizesAndGroups) {
  ZINFER_REQUIRE_CUDA();
  const std::vector<SeqSpec> seqs = {{1030, 1}, {53, 1}, {96, 1}, {0, 17}};
  for (int bs : {8, 12, 32, 64}) {
    for (const auto& [Hq, Hkv, D] : {std::tuple{3, 3, 64}, std::tuple{7, 1, 128}, std::tuple{32, 2, 128}}) {
      const Problem p = make_problem(Hq, Hkv, D, seqs, 61 + bs + D + Hq, 0, bs);
      DeviceProblem dp(p);
      std::vector<int32_t> tokens(p.T);
      std::iota(tokens.begin(), tokens.end(), 0);
      DeviceArray<int32_t> d_tokens(tokens);
      const std::vector<double> ref = reference(p);
      for (int splits : {1, 5, 32}) {
        SplitWorkspace ws(p, splits);
        dp.out.poison();
        const DecodeWork work = ws.work(d_tokens.get(), p.T);
        check_cuda(launch_decode_attention(dp.kv, work, nullptr), "decode attention");
        const double err = relative_error(to_float(dp.out.download()), ref);
        EXPECT_LT(err, 4e-3) << "block size " << bs << " Hq " << Hq << " Hkv " << Hkv << " D " << D << " splits "
                             << splits;
      }
    }
  }
}

// The last split of each (token, head group) to finish merges the splits and zeroes its counter:
// launch after launch (as a CUDA graph replays the step) the counters start at zero and the
// output is the same, bit for bit; without counters a split launch is refused.
TEST(CudaDecodeAttention, LastSplitMergesAndLeavesCountersZeroForTheNextLaunch) {
  ZINFER_REQUIRE_CUDA();
  const std::vector<SeqSpec> seqs = {{1030, 1}, {53, 1}, {300, 1}};
  for (const auto& [Hq, Hkv, D] : {std::tuple{32, 8, 128}, std::tuple{4, 2, 24}}) {
    const Problem p = make_problem(Hq, Hkv, D, seqs, 91 + D, 0, 16);
    DeviceProblem dp(p);
    std::vector<int32_t> tokens(p.T);
    std::iota(tokens.begin(), tokens.end(), 0);
    DeviceArray<int32_t> d_tokens(tokens);
    const std::vector<double> ref = reference(p);
    const int splits = 32;
    SplitWorkspace ws(p, splits);
    const std::vector<uint32_t> zeros(static_cast<size_t>(p.T) * Hq, 0);
    DecodeWork work = ws.work(d_tokens.get(), p.T);
    std::vector<__nv_bfloat16> first;
    for (int launch = 0; launch < 3; ++launch) {
      dp.out.poison();
      check_cuda(launch_decode_attention(dp.kv, work, nullptr), "decode attention");
      const std::vector<__nv_bfloat16> out = dp.out.download();
      EXPECT_EQ(ws.counters.download(), zeros) << "D " << D << " launch " << launch;
      if (launch == 0) {
        first = out;
        EXPECT_LT(relative_error(to_float(out), ref), 4e-3) << "D " << D;
      } else {
        EXPECT_EQ(0, std::memcmp(out.data(), first.data(), out.size() * sizeof(__nv_bfloat16))) << "D " << D;
      }
    }
    work.split_counters = nullptr;
    EXPECT_EQ(launch_decode_attention(dp.kv, work, nullptr), cudaErrorInvalidValue);
    work.num_splits = 1;  // one split writes the output itself and needs no workspace
    work.partial_acc = work.partial_ml = nullptr;
    dp.out.poison();
    check_cuda(launch_decode_attention(dp.kv, work, nullptr), "decode attention, one split");
    EXPECT_LT(relative_error(to_float(dp.out.download()), ref), 4e-3) << "D " << D;
  }
}

// Invariant 21 (docs/architecture.md): before its wait a programmatically launched kernel reads only what its two predecessors do not write.
// With keys_before_query_cached the kernel reads the cached keys while the kernels before it may
// still run, and q and each token's own key only after them, as a decode step launches it: a
// long GEMV, then the rotary kernel writing q and the new K/V rows (zero frequencies: the rotation
// is the identity), then the attention. The rows the rotary kernel writes start as NaN, so a read
// that came too early shows in the output. Positions put the new key in a warp's first, second
// and later tiles, and at the start, middle and end of a split.
TEST(CudaDecodeAttention, ReadsCachedKeysEarlyAndTheNewKeyAfterTheKernelThatWritesIt) {
  ZINFER_REQUIRE_CUDA();
  const std::vector<SeqSpec> seqs = {{1030, 1}, {53, 1}, {300, 1}, {0, 1}, {15, 1}, {16, 1}, {64, 1}, {127, 1}, {128, 1}};
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  // The GEMV in front: 16384 x 4096 bf16 (128 MB, tens of microseconds), its output unused.
  const int gemv_n = 16384, gemv_k = 4096;
  DeviceArray<__nv_bfloat16> gemv_w(static_cast<size_t>(gemv_n) * gemv_k), gemv_x(gemv_k), gemv_y(gemv_n);
  check_cuda(cudaMemset(gemv_w.get(), 0, static_cast<size_t>(gemv_n) * gemv_k * 2), "memset");
  check_cuda(cudaMemset(gemv_x.get(), 0, gemv_k * 2), "memset");
  GemvArgs g;
  g.x = gemv_x.get(), g.w = gemv_w.get(), g.y_bf16 = gemv_y.get(), g.m = 1, g.n = gemv_n, g.k = gemv_k;
  for (const auto& [Hq, Hkv, D] : {std::tuple{32, 8, 128}, std::tuple{12, 2, 64}, std::tuple{4, 2, 24}}) {
    const Problem p = make_problem(Hq, Hkv, D, seqs, 17 + D, 0, 16);
    const std::vector<double> ref = reference(p);
    // The rotary kernel's input: each token's q, k and v rows; its own cache rows start as NaN.
    const int width = (Hq + 2 * Hkv) * D, row = Hkv * D;
    std::vector<float> qkv(static_cast<size_t>(p.T) * width);
    std::vector<int32_t> slots(p.T);
    Problem stale = p;
    for (int t = 0; t < p.T; ++t) {
      slots[t] = cache_slot(p, p.token_seq[t], p.positions[t]);
      std::copy_n(p.q.begin() + static_cast<size_t>(t) * Hq * D, Hq * D, qkv.begin() + static_cast<size_t>(t) * width);
      std::copy_n(p.k.begin() + static_cast<size_t>(slots[t]) * row, row, qkv.begin() + static_cast<size_t>(t) * width + Hq * D);
      std::copy_n(p.v.begin() + static_cast<size_t>(slots[t]) * row, row,
                  qkv.begin() + static_cast<size_t>(t) * width + (Hq + Hkv) * D);
      std::fill_n(stale.k.begin() + static_cast<size_t>(slots[t]) * row, row, std::nanf(""));
      std::fill_n(stale.v.begin() + static_cast<size_t>(slots[t]) * row, row, std::nanf(""));
    }
    DeviceArray<__nv_bfloat16> d_qkv(to_bf16(qkv));
    DeviceArray<float> inv_freq(std::vector<float>(D / 2, 0.f));
    DeviceArray<int32_t> d_slots(slots);
    std::vector<int32_t> tokens(p.T);
    std::iota(tokens.begin(), tokens.end(), 0);
    DeviceArray<int32_t> d_tokens(tokens);
    for (int splits : {1, 4, 32}) {
      DeviceProblem dp(stale);
      dp.q.poison();
      dp.out.poison();
      QkvRopeParams rp;
      rp.qkv = d_qkv.get(), rp.inv_freq = inv_freq.get(), rp.positions = dp.positions.get();
      rp.slot_mapping = d_slots.get(), rp.q_out = dp.q.get(), rp.k_cache = dp.k.get(), rp.v_cache = dp.v.get();
      rp.num_tokens = p.T, rp.num_heads = Hq, rp.num_kv_heads = Hkv, rp.head_dim = D;
      SplitWorkspace ws(p, splits);
      DecodeWork work = ws.work(d_tokens.get(), p.T);
      work.keys_before_query_cached = true;
      check_cuda(launch_gemv(g, stream), "gemv");
      check_cuda(launch_qkv_rope(rp, stream), "qkv rope");
      check_cuda(launch_decode_attention(dp.kv, work, stream), "decode attention");
      check_cuda(cudaStreamSynchronize(stream), "sync");
      const double err = relative_error(to_float(dp.out.download()), ref);
      EXPECT_LT(err, 4e-3) << "Hq " << Hq << " Hkv " << Hkv << " D " << D << " splits " << splits;
    }
  }
  cudaStreamDestroy(stream);
}

TEST(CudaDecodeAttention, SupportsHeadDimsThatAreMultiplesOfEight) {
  for (int d : {8, 16, 24, 40, 64, 96, 128, 256}) EXPECT_TRUE(decode_attention_supports(d)) << d;
  for (int d : {0, 4, 12, 20, 264, 512}) EXPECT_FALSE(decode_attention_supports(d)) << d;
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
