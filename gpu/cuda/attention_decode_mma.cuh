// Split-K decode attention on tensor cores, for head dims 64 and 128 (included by
// attention_decode_mma_d64.cu / _d128.cu, one instantiation each).
//
// Block (token, kv head, group of <= 8 query heads, split); its 4 warps take turns on tiles of 16
// keys of the split (32 with an fp8 cache). Each warp streams its tiles through a private ring of 2
// shared-memory buffers with cp.async: the next tile (8 KB of K and V at D = 128) loads while the
// warp computes on the current one. 64 KB per block at D = 128 lets 3 blocks share an SM, 96 KB of
// loads in flight per SM, about 3x what hides HBM latency (the bandwidth times the loaded latency,
// spread over the SMs). A 3-deep ring would leave room for only 2 blocks per SM; it helps only a
// grid of under two waves, and loses once the keys are split or the batch is large. Only __syncwarp
// guards a warp's ring (no block-wide barrier until the final merge), so a warp never waits on
// another.
//
// The query heads are the rows of mma.sync m16n8k16 (rows 0..7; rows 8..15 stay zero): the scores
// S = Q·Kᵀ of a tile are 2 × D/16 MMAs with K read by ldmatrix, and O += P·V are D/8 MMAs with V
// read by ldmatrix.trans, P taken straight from the score registers. A key costs no shuffles; the
// softmax reduces over the 4 lanes of a quad once per tile (two shuffles). Softmax state in
// float32; P enters the P·V MMA rounded to bf16 (f16 with an fp8 cache).
//
// Shared-memory tile: [16 keys][D] bf16, rows of D * 2 bytes whose 16-byte chunks are XOR-swizzled
// by (row % 8), so the 8 rows an ldmatrix reads fall in 8 different bank groups.
//
// An fp8 cache (CacheT = __nv_fp8_e4m3): the ring holds the tiles' e4m3 codes as loaded ([32 keys]
// [D] bytes, 16-byte chunks swizzled likewise: a bf16 tile's bytes). The MMAs read the codes from
// it by ldmatrix (K) and ldmatrix.trans (V), two codes per 16-bit element, and convert them in
// registers to f16 (exact, one instruction per two codes); they run in f16, with Q in f16 carrying
// the score scale (and k_scale) and its dims in the order the K codes arrive, P in f16, and O's
// dims in the order the V codes arrive (put back when O is written). v_scale multiplies the output.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/attention_decode_internal.cuh"
#include "gpu/cuda/attention_device.cuh"
#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/kv_cache_element.cuh"
#include "gpu/cuda/programmatic_launch.cuh"
#include "gpu/cuda/shared_memory_opt_in.cuh"

namespace zinfer::gpu::cuda {
namespace decode_mma {

constexpr int kWarps = 4;
constexpr int kRows = 8;       // query heads per block: MMA rows 0..7 (rows 8..15 are zero)
static_assert(kRows <= kMaxMergeRows, "the split merge holds a block's heads in shared memory");
constexpr float kLog2e = 1.4426950408889634f;

template <int D, typename CacheT>
struct Shape {
  static constexpr bool kFp8 = sizeof(CacheT) == 1;
  // Keys per warp tile: the n of 2 (4) score MMAs, the k of 1 (2) P·V MMAs. An fp8 tile holds 32
  // keys in a bf16 tile's bytes, so a tile's fixed costs (the softmax's shuffles and exponent
  // of the rescale, the waits) are paid once per 32 keys.
  static constexpr int kTileKeys = kFp8 ? 32 : 16;
  static constexpr int kChunks = D / 8;                  // 8-element chunks per key row (16 bytes of bf16)
  // Ring depth per warp: 2 tiles (one loading while one is computed) fill an SM's shared memory
  // at 3 blocks.
  static constexpr int kStages = 2;
  static constexpr int kLoadedTileBytes = kTileKeys * D * static_cast<int>(sizeof(CacheT));
  static constexpr int kStageBytes = 2 * kLoadedTileBytes;  // K tile then V tile, as loaded
  static constexpr int kWarpBytes = kStages * kStageBytes;
  static constexpr int kBlockBytes = kWarps * kWarpBytes;
  // The end-of-block merge reuses each warp's ring: o [kRows][D], m [kRows], l [kRows] floats.
  static_assert((kRows * D + 2 * kRows) * 4 <= kWarpBytes, "merge area must fit in a warp's ring");
  static_assert(kChunks >= 8, "the swizzle permutes 8 chunks per row");
};

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// c += A·B for one m16n8k16 tile whose A rows 8..15 are zero (a1 = a3 = 0), in bf16 (a bf16
// cache) or f16 (an fp8 cache: e4m3 -> f16 is one instruction per two codes and exact).
template <bool kF16>
__device__ __forceinline__ void mma_rows0to7(float (&c)[4], uint32_t a0, uint32_t a2, uint32_t b0, uint32_t b1) {
  if constexpr (kF16) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
  }
}

// Two floats as the MMA's element pair (.x, the lower 16 bits, is the lower k index).
template <bool kF16>
__device__ __forceinline__ uint32_t pack_pair(float lo, float hi) {
  if constexpr (kF16) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
}

// Byte offset of 16-byte chunk `chunk` of key row `row` inside a swizzled tile.
template <int D>
__device__ __forceinline__ uint32_t tile_offset(int row, int chunk) {
  return row * D * 2 + ((chunk ^ (row & 7)) << 4);
}

// Byte offset of 16-byte chunk `chunk` of key row `row` in a tile as loaded: the swizzled bf16
// tile above, or rows of D e4m3 codes whose 16-byte chunks are XOR-swizzled so that the 8 rows an
// ldmatrix reads again fall in 8 different bank groups (at D = 64 a row is half of 128 bytes: the
// swizzle then changes every second row).
template <int D, typename CacheT>
__device__ __forceinline__ uint32_t loaded_offset(int row, int chunk) {
  if constexpr (sizeof(CacheT) == 1) {
    constexpr int kUnits = D / 16, kRowsPerLine = 8 / kUnits;
    static_assert(kUnits == 4 || kUnits == 8, "fp8 rows of 64 or 128 codes");
    return row * D + ((chunk ^ ((row / kRowsPerLine) % kUnits)) << 4);
  } else {
    return tile_offset<D>(row, chunk);
  }
}

// Two e4m3 codes, the bytes `lo` and `hi` of x, as an f16 pair (lo in the lower half).
template <int kLo, int kHi>
__device__ __forceinline__ uint32_t codes_to_f16x2(uint32_t x) {
  return e4m3x2_to_f16x2(static_cast<uint16_t>(__byte_perm(x, 0u, 0x4400 | (kHi << 4) | kLo)));
}

template <int D, typename CacheT>
__global__ void __launch_bounds__(kWarps * 32, 3) decode_mma_kernel(PagedKv kv, DecodeWork work, int head_groups) {
  using S = Shape<D, CacheT>;
  constexpr int kStages = S::kStages, kTileKeys = S::kTileKeys;
  constexpr int kNT = kTileKeys / 8, kKT = kTileKeys / 16;  // score n-tiles, P·V k-steps
  extern __shared__ __align__(128) unsigned char smem[];
  // Launched programmatically (see programmatic_launch.cuh): the o projection's GEMV may start on
  // idle SMs. Until the wait below the block reads only what the rotary kernel (and the qkv
  // projection before it, which may still be running) does not write: the step's arrays and,
  // when work.keys_before_query_cached, the cached keys before the token's own position. At
  // batch 1 that is every key but one, so after the wait only q and the new key's row are read
  // instead of a chain of five dependent reads (token, position, sequence, block table, K/V).
  allow_next_kernel();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = lane / 4, quad = lane % 4;  // MMA fragment coordinates: row = query head

  const int t = work.tokens[blockIdx.x];
  const int group_size = kv.num_heads / kv.num_kv_heads;
  const int kvh = blockIdx.y / head_groups;
  const int first_in_group = (blockIdx.y % head_groups) * kRows;
  const int rows = min(kRows, group_size - first_in_group);  // real query heads of this block
  const int h_base = kvh * group_size + first_in_group;

  const int ctx = kv.positions[t] + 1;
  // Keys [first_key, ctx): the whole context, or its last sliding_window positions.
  const int first_key = kv.sliding_window > 0 ? max(0, ctx - kv.sliding_window) : 0;
  const int num_keys = ctx - first_key;
  const int* bt = kv.block_tables + kv.seq_block_offset[kv.token_seq[t]];
  const int split = blockIdx.z, num_splits = gridDim.z;
  // Short key ranges use fewer splits (at least 64 keys each); a split covers whole tiles
  // but its last. The blocks of the splits past those have nothing to do.
  const int used_splits = used_splits_of(num_keys, num_splits);
  if (split >= used_splits) {
    end_unused_split();
    return;
  }
  const int chunk = ((num_keys + used_splits - 1) / used_splits + kTileKeys - 1) / kTileKeys * kTileKeys;
  const int key_begin = first_key + split * chunk;
  const int key_end = min(ctx, key_begin + chunk);
  const int num_tiles = key_end > key_begin ? (key_end - key_begin + kTileKeys - 1) / kTileKeys : 0;
  const int my_tiles = num_tiles > warp ? (num_tiles - warp + kWarps - 1) / kWarps : 0;  // tiles warp, warp+4, ..

  const int64_t row_stride = static_cast<int64_t>(kv.num_kv_heads) * D;  // elements per cache row
  const CacheT* k_head = k_cache_of<CacheT>(kv) + static_cast<int64_t>(kvh) * D;
  const CacheT* v_head = v_cache_of<CacheT>(kv) + static_cast<int64_t>(kvh) * D;
  unsigned char* warp_smem = smem + warp * S::kWarpBytes;
  const uint32_t ring = smem_u32(warp_smem);

  // Starts copying rows of this warp's tile i into ring slot i % kStages (nothing past the last
  // tile): the keys in [from, to) from the cache and, with zero_tail, zeros for the rows past
  // key_end, which keeps NaN bit patterns of stale shared memory out of P·V (their P is 0, and
  // 0 · NaN would be NaN); other rows are left to another call. The caller closes the cp.async
  // group.
  //
  // Lane l resolves key l % kTileKeys of the tile; each copy of a 16-byte row chunk takes its
  // key's slot from that lane by one shuffle, so that each copy instruction of the warp reads
  // whole rows (2 of a bf16 row at D = 128), which HBM serves better than a sector from each of
  // 16 rows. Row-chunk arithmetic is 32-bit with one widening multiply per copy (slots are
  // 32-bit, as the step's slot mapping stores them). `entry` is the lane's block-table entry
  // (entry_of), read by the caller a tile ahead so that its latency does not hold up the copies.
  constexpr int kRowChunks = D * static_cast<int>(sizeof(CacheT)) / 16;  // 16-byte chunks of a row
  constexpr int kLaneCopies = kTileKeys * kRowChunks / 32;                // per tile, K and V each
  static_assert(32 % kRowChunks == 0, "a lane copies the same chunk of every row it copies");
  constexpr int kOther = -2, kZeros = -1;  // a row another call copies; a row of zeros
  const uint32_t row_bytes = static_cast<uint32_t>(row_stride * sizeof(CacheT));
  const char* k_bytes = reinterpret_cast<const char*>(k_head);
  const char* v_bytes = reinterpret_cast<const char*>(v_head);
  auto key_of = [&](int i) { return key_begin + (warp + i * kWarps) * kTileKeys + lane % kTileKeys; };
  auto entry_of = [&](int i) -> int {
    const int key = key_of(i);
    return i < my_tiles && key < key_end ? bt[paged_entry_index(key, kv.block_size)] : 0;
  };
  auto load_rows = [&](int i, int from, int to, bool zero_tail, int entry) {
    if (i >= my_tiles) return;
    const int key = key_of(i);
    const int slot = key >= from && key < to ? static_cast<int>(paged_slot_from(entry, key, kv.block_size))
                     : zero_tail && key >= key_end ? kZeros
                                                   : kOther;
    const uint32_t dst = ring + (i % kStages) * S::kStageBytes;
    const int ch = lane % kRowChunks;
#pragma unroll
    for (int j = 0; j < kLaneCopies; ++j) {
      const int r = (j * 32 + lane) / kRowChunks;
      const int r_slot = __shfl_sync(0xffffffffu, slot, r);
      if (r_slot == kOther) continue;
      const uint64_t src = static_cast<uint64_t>(static_cast<uint32_t>(max(r_slot, 0))) * row_bytes + ch * 16;
      const uint32_t off = loaded_offset<D, CacheT>(r, ch);
      const uint32_t bytes = r_slot >= 0 ? 16u : 0u;
      cp_async16(dst + off, k_bytes + src, bytes);
      cp_async16(dst + S::kLoadedTileBytes + off, v_bytes + src, bytes);
    }
  };

  float o[D / 8][4];  // O fragments: head `row`, dims 8 n + 2 quad + {0, 1} (entries 2, 3: zero rows)
#pragma unroll
  for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_run = -INFINITY;  // running max of head `row` (log2 units), same in the 4 lanes of a quad
  float l_run = 0.f;        // this lane's part of the running sum (its 4 keys of each tile)
  const float qk_scale = kv.scale * kLog2e * kv.k_scale;  // k_scale: 1 for bf16

  // ldmatrix lane addressing: lane / 8 picks the 8x8 matrix, lane % 8 its row.
  const int mat = lane / 8;
  const int k_row = (mat / 2) * 8 + lane % 8, k_chunk = mat % 2;  // S: keys 0-7 / 8-15 x dims lo / hi
  const int v_row = (mat % 2) * 8 + lane % 8, v_chunk = mat / 2;  // P·V: keys lo / hi x dim tiles 2j / 2j+1

  // Before the wait: the first kStages tiles' keys up to cached_end (one cp.async group each).
  // After it: the rows of those tiles from cached_end on, in one more group when there are any,
  // and every later tile whole.
  const int cached_end = work.keys_before_query_cached ? min(key_end, ctx - 1) : key_begin;
  int first_entries[kStages];
#pragma unroll
  for (int i = 0; i < kStages; ++i) {
    first_entries[i] = entry_of(i);
    load_rows(i, key_begin, cached_end, true, first_entries[i]);
    cp_async_commit();
  }
  wait_for_previous_kernel();

  // Q as A fragments. A bf16 cache: Q unscaled (exact), the scale applied to the float32 scores;
  // qa[ks] = (a0, a2): head `row`, dims 16 ks + 2 quad + {0, 1} and + 8. An fp8 cache: Q · qk_scale
  // in f16, the type its K converts to exactly (f16 keeps 3 more bits of Q than bf16), so the
  // scores come out scaled; clamped to f16's range (a score past it saturates the softmax either
  // way). Its MMA inputs are the dims in the order ldmatrix hands out K's codes (two per 16-bit
  // element): qa[ks] = head `row`, dims 16 ks + 4 quad + {0, 1} and + {2, 3}.
  uint32_t qa[D / 16][2];
  {
    constexpr int kLaneDims = S::kFp8 ? 4 : 2, kSecond = S::kFp8 ? 2 : 8;
    const __nv_bfloat16* q_row =
        kv.q + (static_cast<int64_t>(t) * kv.num_heads + h_base + row) * D + quad * kLaneDims;
    auto fragment = [&](const __nv_bfloat16* at) -> uint32_t {
      if (row >= rows) return 0u;
      const uint32_t raw = *reinterpret_cast<const uint32_t*>(at);
      if constexpr (!S::kFp8) return raw;
      const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw));
      constexpr float kF16Max = 65504.f;
      return pack_pair<true>(fminf(fmaxf(f.x * qk_scale, -kF16Max), kF16Max),
                             fminf(fmaxf(f.y * qk_scale, -kF16Max), kF16Max));
    };
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      qa[ks][0] = fragment(q_row + ks * 16);
      qa[ks][1] = fragment(q_row + ks * 16 + kSecond);
    }
  }
  const float score_scale = S::kFp8 ? 1.f : qk_scale;  // an fp8 cache's Q carries it

  // Rows this step wrote (its own key) or that were not read early, in the first kStages tiles.
  const int late_from = max(cached_end, key_begin);
  const bool late = late_from < key_end && my_tiles > 0 &&
                    key_begin + (warp + (min(my_tiles, kStages) - 1) * kWarps + 1) * kTileKeys > late_from;
  if (late) {
#pragma unroll
    for (int i = 0; i < kStages; ++i) load_rows(i, late_from, key_end, false, first_entries[i]);
    cp_async_commit();
  }
  for (int i = 0; i < my_tiles; ++i) {
    const int next_entry = entry_of(i + kStages);  // read now, used once this tile is done
    // cp.async groups, oldest first: tiles 0 .. kStages - 1, the late rows (if any), then one per
    // later tile. With only the newest group pending tile i is complete, except at i = 0, where
    // the newest is the late rows, which tile 0 may need.
    if (i == 0 && late) {
      cp_async_wait<0>();
    } else {
      cp_async_wait<kStages - 1>();
    }
    __syncwarp();  // every lane's copies of tile i are visible to the whole warp
    const uint32_t k_tile = ring + (i % kStages) * S::kStageBytes;
    const uint32_t v_tile = k_tile + S::kLoadedTileBytes;

    // Scores: head `row`, keys 8 n + 2 quad + {0, 1}, summed over even and odd k16 steps apart
    // (sh[step % 2][n]) so that four MMA chains, not two, hide each other's latency.
    float sh[2][kNT][4] = {};
    if constexpr (S::kFp8) {
      // K's codes straight from the ring: matrix m of an ldmatrix.x4 is keys 16 kh + 8 (m % 2) ..
      // + 7 of dims 32 kp + 16 (m / 2) .. + 15, a lane's 16-bit element two codes; the lane's four codes
      // of a row are its k16 inputs 2 quad, 2 quad + 1, 2 quad + 8, 2 quad + 9 (Q's order above).
#pragma unroll
      for (int kp = 0; kp < D / 32; ++kp) {
#pragma unroll
        for (int kh = 0; kh < kKT; ++kh) {  // keys 16 kh .. + 15
          uint32_t b[4];
          ldmatrix_x4(b, k_tile + loaded_offset<D, CacheT>(16 * kh + (mat % 2) * 8 + lane % 8, 2 * kp + mat / 2));
#pragma unroll
          for (int m = 0; m < 4; ++m) {
            const uint32_t lo = codes_to_f16x2<0, 1>(b[m]), hi = codes_to_f16x2<2, 3>(b[m]);
            mma_rows0to7<true>(sh[m / 2][2 * kh + m % 2], qa[2 * kp + m / 2][0], qa[2 * kp + m / 2][1], lo, hi);
          }
        }
      }
    } else {
#pragma unroll
      for (int ks = 0; ks < D / 16; ++ks) {
        uint32_t b[4];
        ldmatrix_x4(b, k_tile + tile_offset<D>(k_row, 2 * ks + k_chunk));
        mma_rows0to7<false>(sh[ks % 2][0], qa[ks][0], qa[ks][1], b[0], b[1]);
        mma_rows0to7<false>(sh[ks % 2][1], qa[ks][0], qa[ks][1], b[2], b[3]);
      }
    }

    const int tile_key = key_begin + (warp + i * kWarps) * kTileKeys;
    float s[kNT][2];
#pragma unroll
    for (int n = 0; n < kNT; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) s[n][e] = (sh[0][n][e] + sh[1][n][e]) * score_scale;
    if (tile_key + kTileKeys > key_end) {  // the split's last tile: keys past its end count nothing
#pragma unroll
      for (int n = 0; n < kNT; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          if (tile_key + n * 8 + quad * 2 + e >= key_end) s[n][e] = -INFINITY;
    }
    float mx = m_run;
#pragma unroll
    for (int n = 0; n < kNT; ++n) mx = fmaxf(mx, fmaxf(s[n][0], s[n][1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    // The tile's first key is valid, so mx is finite; the first tile's correction is exp2(-inf) = 0.
    const float corr = fast_exp2(m_run - mx);
    m_run = mx;
    // Once the running max settles most tiles leave every head's max as it was (corr = 1): the
    // warp then skips the D / 4 multiplies.
    if (__any_sync(0xffffffffu, corr != 1.f)) {
      l_run *= corr;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        o[n][0] *= corr;
        o[n][1] *= corr;
      }
    }
    float p[kNT][2];
#pragma unroll
    for (int n = 0; n < kNT; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        p[n][e] = fast_exp2(s[n][e] - mx);
        l_run += p[n][e];
      }
    }
    // The score C fragments are the P·V A fragments: for keys 16 kk .. + 15, a0 = keys 2 quad +
    // {0, 1} (n-tile 2 kk), a2 = keys 8 + ... (n-tile 2 kk + 1).
    uint32_t pa[kKT][2];
#pragma unroll
    for (int kk = 0; kk < kKT; ++kk) {
      pa[kk][0] = pack_pair<S::kFp8>(p[2 * kk][0], p[2 * kk][1]);
      pa[kk][1] = pack_pair<S::kFp8>(p[2 * kk + 1][0], p[2 * kk + 1][1]);
    }
    if constexpr (S::kFp8) {
      // V's codes straight from the ring by ldmatrix.trans: matrix m is keys 16 kk + 8 (m % 2) ..
      // + 7 of dims 32 vp + 16 (m / 2) .. + 15, and a lane's element holds keys 2 quad and 2 quad + 1 of
      // the dims 2 g and 2 g + 1 of its 16 (g = lane / 4): bytes 0 and 2 are the even dim's pair,
      // 1 and 3 the odd one's. So o[2 c + e] holds dims 16 c + 4 quad + e (+ 2), c a 16-dim chunk.
#pragma unroll
      for (int vp = 0; vp < D / 32; ++vp) {
#pragma unroll
        for (int kk = 0; kk < kKT; ++kk) {
          uint32_t b[4];
          ldmatrix_x4_trans(b, v_tile + loaded_offset<D, CacheT>(16 * kk + (mat % 2) * 8 + lane % 8, 2 * vp + mat / 2));
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            float(&even)[4] = o[2 * (2 * vp + c)];
            float(&odd)[4] = o[2 * (2 * vp + c) + 1];
            mma_rows0to7<true>(even, pa[kk][0], pa[kk][1], codes_to_f16x2<0, 2>(b[2 * c]),
                               codes_to_f16x2<0, 2>(b[2 * c + 1]));
            mma_rows0to7<true>(odd, pa[kk][0], pa[kk][1], codes_to_f16x2<1, 3>(b[2 * c]),
                               codes_to_f16x2<1, 3>(b[2 * c + 1]));
          }
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < D / 16; ++j) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, v_tile + tile_offset<D>(v_row, 2 * j + v_chunk));
        mma_rows0to7<false>(o[2 * j], pa[0][0], pa[0][1], b[0], b[1]);
        mma_rows0to7<false>(o[2 * j + 1], pa[0][0], pa[0][1], b[2], b[3]);
      }
    }
    __syncwarp();  // all lanes are done reading slot i % kStages before it is refilled
    load_rows(i + kStages, key_begin, key_end, true, next_entry);
    cp_async_commit();
  }
  cp_async_wait<0>();  // the trailing empty groups; the ring is free for the merge below
  __syncwarp();

  l_run += __shfl_xor_sync(0xffffffffu, l_run, 1);
  l_run += __shfl_xor_sync(0xffffffffu, l_run, 2);
  float* w_o = reinterpret_cast<float*>(warp_smem);  // [kRows][D], then m [kRows], l [kRows]
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    if constexpr (S::kFp8) {  // o[n]: dims 16 (n / 2) + 4 quad + n % 2, and + 2
      w_o[row * D + (n / 2) * 16 + quad * 4 + n % 2] = o[n][0];
      w_o[row * D + (n / 2) * 16 + quad * 4 + n % 2 + 2] = o[n][1];
    } else {
      *reinterpret_cast<float2*>(&w_o[row * D + n * 8 + quad * 2]) = make_float2(o[n][0], o[n][1]);
    }
  }
  if (quad == 0) {
    w_o[kRows * D + row] = m_run;
    w_o[kRows * D + kRows + row] = l_run;
  }
  __syncthreads();

  // Merge the 4 warps' states; an empty split (no keys) leaves m = -inf, l = 0, acc = 0.
  for (int idx = threadIdx.x; idx < rows * D; idx += blockDim.x) {
    const int g = idx / D, d = idx % D;
    float m_w[kWarps];
    float m_max = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      m_w[w] = reinterpret_cast<const float*>(smem + w * S::kWarpBytes)[kRows * D + g];
      m_max = fmaxf(m_max, m_w[w]);
    }
    float a = 0.f, lsum = 0.f;
    if (m_max != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const float* wf = reinterpret_cast<const float*>(smem + w * S::kWarpBytes);
        const float weight = fast_exp2(m_w[w] - m_max);
        a += wf[g * D + d] * weight;
        lsum += wf[kRows * D + kRows + g] * weight;
      }
    }
    const int h = h_base + g;
    if (used_splits == 1) {
      kv.out[(static_cast<int64_t>(t) * kv.num_heads + h) * D + d] = __float2bfloat16(a / lsum * kv.v_scale);
    } else {
      const int64_t part = (static_cast<int64_t>(blockIdx.x) * kv.num_heads + h) * num_splits + split;
      work.partial_acc[part * D + d] = a;
      if (d == 0) {
        work.partial_ml[part * 2] = m_max;
        work.partial_ml[part * 2 + 1] = lsum;
      }
    }
  }
  if (used_splits > 1 && last_split_to_finish(&work.split_counters[blockIdx.x * gridDim.y + blockIdx.y], used_splits)) {
    merge_splits(kv, work, blockIdx.x, t, h_base, rows, D, used_splits);
  }
}

}  // namespace decode_mma

template <int D, typename CacheT>
cudaError_t launch_decode_mma(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream) {
  using S = decode_mma::Shape<D, CacheT>;
  // More than 48 KB of dynamic shared memory: opted in once per device (shared_memory_opt_in.cuh).
  static std::atomic<uint64_t> opted_in{0};
  const cudaError_t status = opt_in_shared_memory(decode_mma::decode_mma_kernel<D, CacheT>, opted_in, [](int* bytes) {
    *bytes = S::kBlockBytes;
    return cudaSuccess;
  });
  if (status != cudaSuccess) return status;
  const int group_size = kv.num_heads / kv.num_kv_heads;
  const int head_groups = (group_size + decode_mma::kRows - 1) / decode_mma::kRows;
  const dim3 grid(work.num_tokens, kv.num_kv_heads * head_groups, work.num_splits);
  ProgrammaticLaunch launch(grid, dim3(decode_mma::kWarps * 32), S::kBlockBytes, stream, /*programmatic=*/true);
  return cudaLaunchKernelEx(&launch.config, decode_mma::decode_mma_kernel<D, CacheT>, kv, work, head_groups);
}

}  // namespace zinfer::gpu::cuda
