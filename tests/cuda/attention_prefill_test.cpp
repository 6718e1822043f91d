// Prefill attention kernels (the Hopper wgmma kernel and the mma.sync fallback) against float64
// on the host, on tiles of kPrefillTileQueries queries: a varlen batch with cached prefixes and
// odd lengths (17, 97, 129, 300), GQA, shuffled physical blocks of 8 to 64 keys, with and without
// a sliding window, and one long sequence that wraps the K/V ring many times.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>

#include "gpu/cuda/attention.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

struct Seq {
  int start_pos;
  int q_len;
};

struct Prefill {
  int Hq, Hkv, D, bs, window;
  int T = 0, num_blocks = 0;
  std::vector<float> q, k, v;  // q [T, Hq, D]; k, v [num_blocks, bs, Hkv, D], bf16-rounded
  std::vector<int32_t> positions, token_seq, seq_offset, block_tables, tiles;
};

Prefill make_prefill(int Hq, int Hkv, int D, int bs, int window, const std::vector<Seq>& seqs, uint32_t seed) {
  Prefill p{Hq, Hkv, D, bs, window};
  std::mt19937 rng(seed);
  for (const Seq& s : seqs) p.num_blocks += (s.start_pos + s.q_len + bs - 1) / bs;
  p.num_blocks += 3;
  std::vector<int32_t> perm(p.num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  int next = 0;
  for (size_t si = 0; si < seqs.size(); ++si) {
    const Seq& s = seqs[si];
    p.seq_offset.push_back(static_cast<int32_t>(p.block_tables.size()));
    for (int b = 0; b < (s.start_pos + s.q_len + bs - 1) / bs; ++b) p.block_tables.push_back(perm[next++]);
    for (int q0 = 0; q0 < s.q_len; q0 += kPrefillTileQueries) {
      p.tiles.insert(p.tiles.end(), {p.T + q0, std::min(kPrefillTileQueries, s.q_len - q0), static_cast<int32_t>(si)});
    }
    for (int i = 0; i < s.q_len; ++i) {
      p.positions.push_back(s.start_pos + i);
      p.token_seq.push_back(static_cast<int32_t>(si));
    }
    p.T += s.q_len;
  }
  auto rounded = [&](size_t n) {
    std::vector<float> x = random_floats(n, rng);
    for (float& f : x) f = round_bf16(f);
    return x;
  };
  p.q = rounded(static_cast<size_t>(p.T) * Hq * D);
  p.k = rounded(static_cast<size_t>(p.num_blocks) * bs * Hkv * D);
  p.v = rounded(static_cast<size_t>(p.num_blocks) * bs * Hkv * D);
  return p;
}

// Token t (position pos) attends keys (pos - window, pos] of its sequence (all of [0, pos]
// without a window).
std::vector<double> reference(const Prefill& p) {
  std::vector<double> out(static_cast<size_t>(p.T) * p.Hq * p.D);
  const double scale = 1.0 / std::sqrt(static_cast<double>(p.D));
  for (int t = 0; t < p.T; ++t) {
    const int ctx = p.positions[t] + 1;
    const int first = p.window > 0 ? std::max(0, ctx - p.window) : 0;
    std::vector<size_t> row(ctx);  // element offset of key j's row of kv head 0
    for (int j = first; j < ctx; ++j) {
      const size_t slot = static_cast<size_t>(p.block_tables[p.seq_offset[p.token_seq[t]] + j / p.bs]) * p.bs + j % p.bs;
      row[j] = slot * p.Hkv * p.D;
    }
    for (int h = 0; h < p.Hq; ++h) {
      const int kvh = h / (p.Hq / p.Hkv);
      const float* q = &p.q[(static_cast<size_t>(t) * p.Hq + h) * p.D];
      std::vector<double> s(ctx, 0.0);
      double mx = -1e300;
      for (int j = first; j < ctx; ++j) {
        const float* k = &p.k[row[j] + kvh * p.D];
        double dot = 0;
        for (int d = 0; d < p.D; ++d) dot += static_cast<double>(q[d]) * k[d];
        s[j] = dot * scale;
        mx = std::max(mx, s[j]);
      }
      double z = 0;
      for (int j = first; j < ctx; ++j) z += (s[j] = std::exp(s[j] - mx));
      double* o = &out[(static_cast<size_t>(t) * p.Hq + h) * p.D];
      for (int j = first; j < ctx; ++j) {
        const float* v = &p.v[row[j] + kvh * p.D];
        for (int d = 0; d < p.D; ++d) o[d] += s[j] * v[d];
      }
      for (int d = 0; d < p.D; ++d) o[d] /= z;
    }
  }
  return out;
}

using Launch = cudaError_t (*)(const PagedKv&, const int32_t*, int32_t, cudaStream_t);

// Runs one kernel on the problem and returns its output.
std::vector<float> run(const Prefill& p, Launch launch) {
  DeviceArray<__nv_bfloat16> q(to_bf16(p.q)), k(to_bf16(p.k)), v(to_bf16(p.v)), out(p.q.size());
  DeviceArray<int32_t> positions(p.positions), token_seq(p.token_seq), seq_offset(p.seq_offset),
      block_tables(p.block_tables), tiles(p.tiles);
  PagedKv kv;
  kv.q = q.get();
  kv.k_cache = k.get();
  kv.v_cache = v.get();
  kv.out = out.get();
  kv.positions = positions.get();
  kv.token_seq = token_seq.get();
  kv.seq_block_offset = seq_offset.get();
  kv.block_tables = block_tables.get();
  kv.num_heads = p.Hq;
  kv.num_kv_heads = p.Hkv;
  kv.head_dim = p.D;
  kv.block_size = p.bs;
  kv.scale = 1.0f / std::sqrt(static_cast<float>(p.D));
  kv.sliding_window = p.window;
  out.poison();
  check_cuda(launch(kv, tiles.get(), static_cast<int32_t>(p.tiles.size() / 3), nullptr), "prefill attention");
  return to_float(out.download());
}

// Cached prefixes of 0 to 200 keys, chunks of 1 to 300 queries (one to three tiles; a tile of
// 17 leaves the second warpgroup of the Hopper kernel without queries).
const std::vector<Seq> kBatch = {{0, 300}, {54, 17}, {7, 97}, {200, 129}, {16, 64}, {130, 1}};

TEST(CudaPrefillAttentionSm90, MatchesFloat64AcrossBlockSizes) {
  ZINFER_REQUIRE_CUDA();
  for (int bs : {8, 16, 32, 64}) {
    const Prefill p = make_prefill(8, 2, 128, bs, 0, kBatch, 101 + bs);
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
      const Prefill p = make_prefill(8, 2, 128, bs, window, kBatch, 211 + bs + window);
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
    const Prefill p = make_prefill(Hq, Hkv, 128, 16, window, {{54, 1100}}, 307 + Hkv + window);
    const std::vector<double> ref = reference(p);
    EXPECT_LT(relative_error(run(p, launch_prefill_attention_sm90), ref), 1e-2)
        << "Hq " << Hq << " Hkv " << Hkv << " window " << window;
  }
}

TEST(CudaPrefillAttentionSm90, DispatchCoversHeadDim64WithTheFallback) {
  ZINFER_REQUIRE_CUDA();
  const Prefill p = make_prefill(6, 3, 64, 16, 0, kBatch, 401);
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
