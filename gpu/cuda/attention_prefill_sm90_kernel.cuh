// FlashAttention-3 style prefill for Hopper (sm_90a), head_dim 128: warpgroup MMA (wgmma) with
// producer warps that gather K/V pages into a shared-memory ring.
//
// Block = one tile of up to 128 consecutive queries of one sequence and one query head;
// 12 warps:
//   warps 0-7  two consumer warpgroups, 64 query rows each. Per key tile of 128 keys:
//              S = Q K^T with wgmma m64n128k16 (Q and K from shared memory, both K-major), the
//              causal/window mask and the online softmax on S in registers, then
//              O += P V with wgmma m64n128k16 (P from registers, V from shared memory read
//              transposed: its head dim is the contiguous N index). S of the next tile is issued
//              before P V of this one, so the softmax overlaps the tensor cores' work.
//   warps 8-11 producers: Q once, then K and V tiles with cp.async (16-byte chunks, a lane pair
//              per 32-byte sector; warp w copies rows 32w..32w+31), written straight into the
//              128-byte-swizzled layout wgmma reads. Four warps, one per SM sub-partition, so
//              that the 4,096 copies per K/V tile pair do not crowd one scheduler (one warp
//              cannot issue them fast enough to keep the tensor cores fed). A stage is "full"
//              when all 128 producer threads' copies have landed (cp.async.mbarrier.arrive) and
//              "empty" again when all 8 consumer warps have finished the wgmma that read it.
// The paged cache is gathered per 128-key tile: key tiles start on multiples of 128, block
// sizes divide 128, so a tile covers 128 / block_size whole pages; one lane per page reads the
// block table and the rows take it by shuffle.
//
// Shared memory (1024-byte aligned): Q [2 slabs][128 rows][64] (32 KB), then kStages x K and
// kStages x V tiles of the same shape (32 KB each), then the mbarriers: 225 KB with 3 stages,
// one block per SM. Registers: 12 warps leave 168 per thread; setmaxnreg moves the producers'
// to the consumers (224 each), who hold O, S and P of a tile (64 + 64 + 32).
//
// Templated on the cache element (kv_cache_element.cuh): attention_prefill_sm90.cu instantiates it
// for bf16, attention_prefill_sm90_fp8.cu for e4m3. With an fp8 cache the producers load each
// 16-byte chunk's 8 codes (8 bytes) into registers, convert them to bf16 (exact) and store the
// chunk where cp.async would have put it, so the consumers' wgmma reads the same bf16 layout; a
// proxy fence then orders those generic-proxy stores before the wgmma's async-proxy reads, and
// each producer thread arrives on the stage's barrier itself. k_scale multiplies the softmax
// scale and v_scale the output.
#pragma once

#include <cfloat>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/attention_prefill_sm90.cuh"
#include "gpu/cuda/bf16_pairs.cuh"
#include "gpu/cuda/kv_cache_element.cuh"

namespace zinfer::gpu::cuda {
namespace prefill_sm90 {

using namespace sm90;

constexpr int kD = 128;
constexpr int kTileM = kPrefillTileQueries;  // queries per block
constexpr int kTileN = 128;                  // keys per stage
constexpr int kStages = 3;
constexpr int kConsumerWarps = 8;
constexpr int kProducerWarps = 4;
constexpr int kProducerThreads = kProducerWarps * 32;
constexpr int kThreads = (kConsumerWarps + kProducerWarps) * 32;
constexpr float kLog2e = 1.4426950408889634f;
static_assert(kTileM == 128, "two consumer warpgroups of 64 rows");

constexpr uint32_t kSlabBytesQ = kTileM * 128;  // one 64-dim slab of all Q rows
constexpr uint32_t kSlabBytesKV = kTileN * 128;
constexpr uint32_t kTileBytesKV = 2 * kSlabBytesKV;
constexpr uint32_t kOffQ = 0;
constexpr uint32_t kOffK = kOffQ + 2 * kSlabBytesQ;
constexpr uint32_t kOffV = kOffK + kStages * kTileBytesKV;
constexpr uint32_t kOffBars = kOffV + kStages * kTileBytesKV;
constexpr uint32_t kNumBars = 1 + 4 * kStages;  // q_full, k_full[], v_full[], k_empty[], v_empty[]
constexpr size_t kSmemBytes = kOffBars + 8 * kNumBars + 1024;  // + slack to align the base

struct Barriers {
  uint32_t base;
  __device__ uint32_t q_full() const { return base; }
  __device__ uint32_t k_full(int s) const { return base + 8 * (1 + s); }
  __device__ uint32_t v_full(int s) const { return base + 8 * (1 + kStages + s); }
  __device__ uint32_t k_empty(int s) const { return base + 8 * (1 + 2 * kStages + s); }
  __device__ uint32_t v_empty(int s) const { return base + 8 * (1 + 3 * kStages + s); }
};

// What every warp knows about its tile.
struct TileInfo {
  int first;       // token row of the first query
  int nq;          // queries in the tile
  int head, kv_head;
  int pos0;        // position of the first query
  int kv_end;      // keys [0, kv_end) exist; query q sees keys <= pos0 + q
  int kv_begin;    // first key tile (a multiple of kTileN)
  int num_kv_tiles;
  const int32_t* block_table;
};

// Copies this producer warp's 32 of the 128 rows x 256 bytes into a swizzled [2][128][64] tile.
// A lane pair copies one whole 32-byte sector per instruction: rows 32 * pw + 16 * pass + lane / 2,
// 16-byte chunks 2m + lane % 2. The row's address is computed once; the 8 chunks of a lane are
// immediate offsets from it. row_src(r) gives the row's source, nullptr for a row to zero-fill
// (the copy then reads nothing from `any`, a valid address).
template <typename RowSrc>
__device__ __forceinline__ void copy_rows(uint32_t tile, uint32_t slab_bytes, int pw, int lane,
                                          const __nv_bfloat16* any, RowSrc row_src) {
  const int half = lane & 1;
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
    const int r = 32 * pw + 16 * pass + lane / 2;
    const __nv_bfloat16* src = row_src(r);
    const uint32_t bytes = src != nullptr ? 16u : 0u;
    const char* from = reinterpret_cast<const char*>(src != nullptr ? src : any) + 16 * half;
    // Chunk c = 2m + half lands at chunk position (c % 8) ^ (r % 8) of slab c / 8 = m / 4;
    // 2 * (m % 4) has bit 0 clear, so the xor splits into a constant and a per-row part.
    const uint32_t row_base = tile + r * 128;
    const uint32_t row_xor = static_cast<uint32_t>(half ^ (r & 7)) << 4;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t dst = row_base + (m / 4) * slab_bytes + ((static_cast<uint32_t>(2 * (m % 4)) << 4) ^ row_xor);
      cp_async16(dst, from + 32 * m, bytes);
    }
  }
}

// copy_rows for an fp8 cache: the same rows and chunks, each chunk's 8 codes loaded (8 bytes),
// converted to bf16 and stored (16 bytes). A row to zero-fill stores zeros. The caller fences and
// arrives.
template <typename RowSrc>
__device__ __forceinline__ void convert_rows(uint32_t tile, uint32_t slab_bytes, int pw, int lane, RowSrc row_src) {
  const int half = lane & 1;
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
    const int r = 32 * pw + 16 * pass + lane / 2;
    const __nv_fp8_e4m3* src = row_src(r);
    uint2 codes[8];
#pragma unroll
    for (int m = 0; m < 8; ++m)  // chunk 2m + half: codes [8 (2m + half), +8)
      codes[m] = src != nullptr ? *reinterpret_cast<const uint2*>(src + 8 * (2 * m + half)) : make_uint2(0, 0);
    const uint32_t row_base = tile + r * 128;
    const uint32_t row_xor = static_cast<uint32_t>(half ^ (r & 7)) << 4;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const uint32_t dst = row_base + (m / 4) * slab_bytes + ((static_cast<uint32_t>(2 * (m % 4)) << 4) ^ row_xor);
      const uint4 b = e4m3x8_to_bf16x8(codes[m]);
      asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};\n" ::"r"(dst), "r"(b.x), "r"(b.y), "r"(b.z), "r"(b.w)
                   : "memory");
    }
  }
}

// The stage's tile is written: bf16 copies complete on the barrier (cp.async arrive); an fp8
// tile's stores are made visible to the async proxy (wgmma) first, then the thread arrives.
template <typename CacheT>
__device__ __forceinline__ void tile_written(uint32_t bar) {
  if constexpr (sizeof(CacheT) == 1) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    mbar_arrive(bar);
  } else {
    cp_async_arrive(bar);
  }
}

template <typename CacheT>
__device__ void produce(const PagedKv& kv, const TileInfo& t, uint32_t smem, const Barriers& bars, int pw,
                        int lane) {
  copy_rows(smem + kOffQ, kSlabBytesQ, pw, lane, kv.q, [&](int r) -> const __nv_bfloat16* {
    return r < t.nq ? kv.q + (static_cast<int64_t>(t.first + r) * kv.num_heads + t.head) * kD : nullptr;
  });
  cp_async_arrive(bars.q_full());

  const int shift = __ffs(kv.block_size) - 1;
  const int slot_stride = kv.num_kv_heads * kD;  // elements per cache slot
  const int pages_per_tile = kTileN >> shift;
  // One lane per page of key tile j reads its physical block; the rows take it by shuffle. The
  // next tile's pages are read while this tile's copies are issued (a block-table read is an L2
  // round trip that would otherwise stall every tile).
  auto read_pages = [&](int j) {
    const int first_page = (t.kv_begin + j * kTileN) >> shift;
    const bool valid = j < t.num_kv_tiles && lane < pages_per_tile && ((first_page + lane) << shift) < t.kv_end;
    return valid ? t.block_table[first_page + lane] : 0;
  };
  int next_page = read_pages(0);
  for (int j = 0; j < t.num_kv_tiles; ++j) {
    const int s = j % kStages;
    const uint32_t parity = ((j / kStages) & 1) ^ 1;  // the first pass finds every stage empty
    const int n0 = t.kv_begin + j * kTileN;
    const int page = next_page;
    next_page = read_pages(j + 1);
    auto gather = [&](const CacheT* cache) {
      return [&, cache](int r) -> const CacheT* {
        const int pg = __shfl_sync(0xffffffffu, page, r >> shift);
        if (n0 + r >= t.kv_end) return nullptr;
        const int slot = (pg << shift) + (r & (kv.block_size - 1));
        return cache + static_cast<int64_t>(slot) * slot_stride + t.kv_head * kD;
      };
    };
    const CacheT* k_cache = k_cache_of<CacheT>(kv);
    const CacheT* v_cache = v_cache_of<CacheT>(kv);
    mbar_wait(bars.k_empty(s), parity);
    if constexpr (sizeof(CacheT) == 1) {
      convert_rows(smem + kOffK + s * kTileBytesKV, kSlabBytesKV, pw, lane, gather(k_cache));
    } else {
      copy_rows(smem + kOffK + s * kTileBytesKV, kSlabBytesKV, pw, lane, k_cache, gather(k_cache));
    }
    tile_written<CacheT>(bars.k_full(s));
    mbar_wait(bars.v_empty(s), parity);
    if constexpr (sizeof(CacheT) == 1) {
      convert_rows(smem + kOffV + s * kTileBytesKV, kSlabBytesKV, pw, lane, gather(v_cache));
    } else {
      copy_rows(smem + kOffV + s * kTileBytesKV, kSlabBytesKV, pw, lane, v_cache, gather(v_cache));
    }
    tile_written<CacheT>(bars.v_full(s));
  }
  cp_async_wait_all();
}

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ void release(uint32_t bar, int lane) {
  __syncwarp();
  if (lane == 0) mbar_arrive(bar);
}

// Running softmax state of this thread's two rows (log2 units) and what it needs to mask.
struct SoftmaxRows {
  float m[2] = {-INFINITY, -INFINITY};  // running max
  float l[2] = {0.f, 0.f};              // this thread's part of the running sum
  int qpos[2];                          // the rows' query positions
  int first_pos, last_pos;              // the warpgroup's query positions
  int kv_end, window;
  float sscale;                         // softmax scale * log2(e)

  // Turns the scores of key tile n0 into unnormalised probabilities in place; corr = factor for
  // what was accumulated so far. A quad of 4 lanes shares a row.
  __device__ __forceinline__ void update(float (&sacc)[64], int n0, int lane, float (&corr)[2]) {
    // Only tiles that reach past the warpgroup's first query (the diagonal), past the last key,
    // or below its window need the mask; the test is uniform across the warpgroup.
    const bool need_mask =
        n0 + kTileN - 1 > first_pos || n0 + kTileN > kv_end || (window > 0 && n0 <= last_pos - window);
    if (need_mask) {
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const int r = (i >> 1) & 1;
        const int key = n0 + 8 * (i / 4) + 2 * (lane % 4) + (i & 1);
        if (key > qpos[r] || key >= kv_end || (window > 0 && key <= qpos[r] - window)) sacc[i] = -INFINITY;
      }
    }
    // Row maxima and sums as 4 independent chains per row (element i belongs to row (i >> 1) & 1,
    // chain i & 1 + 2 * ((i >> 2) & 1)): with only two consumer warps per scheduler, one long
    // dependent chain of 32 FMNMX / FADD would leave the scheduler idle on its latency.
    float mx[2][4];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int c = 0; c < 4; ++c) mx[r][c] = -INFINITY;
    }
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      float& m_chain = mx[(i >> 1) & 1][(i & 1) + 2 * ((i >> 2) & 1)];
      m_chain = fmaxf(m_chain, sacc[i]);
    }
    float m_use[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float row_max = fmaxf(fmaxf(mx[r][0], mx[r][1]), fmaxf(mx[r][2], mx[r][3]));
      row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffffu, row_max, 1));
      row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffffu, row_max, 2));
      const float m_new = fmaxf(m[r], row_max * sscale);
      m_use[r] = m_new == -INFINITY ? 0.f : m_new;  // a row with nothing visible yet
      corr[r] = exp2_approx(m[r] - m_use[r]);
      m[r] = m_new;
    }
    float sum[2][4] = {};
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      const int r = (i >> 1) & 1;
      sacc[i] = exp2_approx(fmaf(sacc[i], sscale, -m_use[r]));
      sum[r][(i & 1) + 2 * ((i >> 2) & 1)] += sacc[i];
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) l[r] = l[r] * corr[r] + ((sum[r][0] + sum[r][1]) + (sum[r][2] + sum[r][3]));
  }
};

// P as the wgmma A fragment: k-step kk covers S columns 16kk..16kk+15 (n-tiles 2kk, 2kk+1).
__device__ __forceinline__ void pack_p(const float (&sacc)[64], uint32_t (&p)[32]) {
#pragma unroll
  for (int kk = 0; kk < kTileN / 16; ++kk) {
    p[4 * kk + 0] = pack_bf16(sacc[8 * kk + 0], sacc[8 * kk + 1]);
    p[4 * kk + 1] = pack_bf16(sacc[8 * kk + 2], sacc[8 * kk + 3]);
    p[4 * kk + 2] = pack_bf16(sacc[8 * kk + 4], sacc[8 * kk + 5]);
    p[4 * kk + 3] = pack_bf16(sacc[8 * kk + 6], sacc[8 * kk + 7]);
  }
}

// S = Q K^T over the 128 head dims: 8 k-steps, 4 per 64-dim slab (32 bytes apart). Issued, not
// waited for.
__device__ __forceinline__ void issue_qk(float (&sacc)[64], uint32_t q_rows, uint32_t k_tile) {
  fence_regs(sacc);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kD / 16; ++kk) {
    const uint32_t k_off = (kk % 4) * 32;
    const uint64_t da = make_smem_desc(q_rows + (kk / 4) * kSlabBytesQ + k_off, 16, 1024);
    const uint64_t db = make_smem_desc(k_tile + (kk / 4) * kSlabBytesKV + k_off, 16, 1024);
    wgmma_m64n128k16_ss(sacc, da, db, kk > 0);
  }
  wgmma_commit();
}

// O += P V: 8 k-steps of 16 keys, 2048 bytes apart; N = 128 head dims = 2 slabs (LBO). Issued,
// not waited for.
__device__ __forceinline__ void issue_pv(float (&o)[64], uint32_t (&p)[32], uint32_t v_tile) {
  fence_regs(p);
  fence_regs(o);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kTileN / 16; ++kk) {
    wgmma_m64n128k16_rs_tb(o, &p[4 * kk], make_smem_desc(v_tile + kk * 16 * 128, kSlabBytesKV, 1024));
  }
  wgmma_commit();
}

// Per key tile j: S_{j+1} = Q K_{j+1}^T is issued, then O += P_j V_j; the softmax of S_{j+1}
// runs while P_j V_j is still on the tensor cores (FlashAttention-3's intra-warpgroup
// pipelining; it costs the registers of a second score tile: O, S and P live together).
// Stages are released as soon as the wgmma that read them completes. There is no proxy fence
// between the producers' cp.async writes and the wgmma reads: the copies complete on the "full"
// mbarrier, whose wait orders them before the reads (as in CUTLASS's cp.async + wgmma mainloops).
__device__ inline void consume(const PagedKv& kv, const TileInfo& t, uint32_t smem, const Barriers& bars, int warp,
                        int lane) {
  const int wg = warp / 4;
  const int row_a = wg * 64 + (warp % 4) * 16 + lane / 4;  // this thread's rows: row_a, row_a + 8

  if (wg * 64 >= t.nq) {
    // No queries for this warpgroup: only keep the ring moving (waiting for each stage to fill
    // keeps its releases in step with the other warpgroup's).
    for (int j = 0; j < t.num_kv_tiles; ++j) {
      const int s = j % kStages;
      const uint32_t parity = (j / kStages) & 1;
      mbar_wait(bars.k_full(s), parity);
      release(bars.k_empty(s), lane);
      mbar_wait(bars.v_full(s), parity);
      release(bars.v_empty(s), lane);
    }
    return;
  }

  SoftmaxRows sm;
  sm.qpos[0] = t.pos0 + row_a;
  sm.qpos[1] = t.pos0 + row_a + 8;
  sm.first_pos = t.pos0 + wg * 64;
  sm.last_pos = sm.first_pos + 63;
  sm.kv_end = t.kv_end;
  sm.window = kv.sliding_window;
  sm.sscale = kv.scale * kLog2e * kv.k_scale;  // k_scale: 1 for bf16
  // A key tile wholly after this warpgroup's last query can only be the last one (queries span at
  // most 128 positions); it is skipped, and nobody waits for its release.
  int num_tiles = t.num_kv_tiles;
  if (t.kv_begin + (num_tiles - 1) * kTileN > sm.last_pos) --num_tiles;

  float o[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  float sacc[64];
  uint32_t p[32];
  float corr[2];

  mbar_wait(bars.q_full(), 0);
  const uint32_t q_rows = smem + kOffQ + wg * 64 * 128;
  auto k_tile = [&](int j) { return smem + kOffK + (j % kStages) * kTileBytesKV; };
  auto v_tile = [&](int j) { return smem + kOffV + (j % kStages) * kTileBytesKV; };
  auto parity = [](int j) { return static_cast<uint32_t>((j / kStages) & 1); };

  mbar_wait(bars.k_full(0), 0);
  issue_qk(sacc, q_rows, k_tile(0));
  wgmma_wait<0>();
  fence_regs(sacc);
  release(bars.k_empty(0), lane);
  sm.update(sacc, t.kv_begin, lane, corr);
  pack_p(sacc, p);
  // Every iteration has a next tile (the last P V follows the loop), so that the wgmma groups in
  // flight at each wait are the same on every path.
  for (int j = 0; j + 1 < num_tiles; ++j) {
    mbar_wait(bars.k_full((j + 1) % kStages), parity(j + 1));
    issue_qk(sacc, q_rows, k_tile(j + 1));
    mbar_wait(bars.v_full(j % kStages), parity(j));
    issue_pv(o, p, v_tile(j));
    wgmma_wait<1>();  // S_{j+1} done; P_j V_j may still run
    fence_regs(sacc);
    release(bars.k_empty((j + 1) % kStages), lane);
    sm.update(sacc, t.kv_begin + (j + 1) * kTileN, lane, corr);
    wgmma_wait<0>();
    fence_regs(o);
    release(bars.v_empty(j % kStages), lane);
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] *= corr[(i >> 1) & 1];
    pack_p(sacc, p);
  }
  const int last = num_tiles - 1;
  mbar_wait(bars.v_full(last % kStages), parity(last));
  issue_pv(o, p, v_tile(last));
  wgmma_wait<0>();
  fence_regs(o);
  release(bars.v_empty(last % kStages), lane);

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    sm.l[r] += __shfl_xor_sync(0xffffffffu, sm.l[r], 1);
    sm.l[r] += __shfl_xor_sync(0xffffffffu, sm.l[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row_a + 8 * r;
    if (row >= t.nq) continue;
    const float inv_l = 1.f / sm.l[r] * kv.v_scale;  // v_scale: 1 for bf16
    __nv_bfloat16* dst =
        kv.out + (static_cast<int64_t>(t.first + row) * kv.num_heads + t.head) * kD + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) {
      *reinterpret_cast<__nv_bfloat162*>(dst + 8 * j) =
          __floats2bfloat162_rn(o[4 * j + 2 * r] * inv_l, o[4 * j + 2 * r + 1] * inv_l);
    }
  }
}

template <typename CacheT>
__global__ void __launch_bounds__(kThreads, 1) prefill_sm90_kernel(PagedKv kv, const int32_t* tiles) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_u32(smem_raw);
  const uint32_t smem = (raw + 1023u) & ~1023u;  // the swizzle's period
  const Barriers bars{smem + kOffBars};

  // Blocks start in order x (head) fastest, then y (tile): later tiles of a sequence see more
  // keys, so they go first, with all heads of a tile together (they share K/V rows in L2).
  const int tile = gridDim.y - 1 - blockIdx.y;
  TileInfo t;
  t.first = tiles[3 * tile];
  t.nq = tiles[3 * tile + 1];
  t.head = blockIdx.x;
  t.kv_head = t.head / (kv.num_heads / kv.num_kv_heads);
  t.pos0 = kv.positions[t.first];
  t.kv_end = t.pos0 + t.nq;
  // With a sliding window, key tiles before the first query's window are skipped; the mask
  // handles the window's edge per query.
  const int lowest_key = kv.sliding_window > 0 ? max(0, t.pos0 - kv.sliding_window + 1) : 0;
  t.kv_begin = lowest_key / kTileN * kTileN;
  t.num_kv_tiles = (t.kv_end - t.kv_begin + kTileN - 1) / kTileN;
  t.block_table = kv.block_tables + kv.seq_block_offset[tiles[3 * tile + 2]];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    mbar_init(bars.q_full(), kProducerThreads);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(bars.k_full(s), kProducerThreads);
      mbar_init(bars.v_full(s), kProducerThreads);
      mbar_init(bars.k_empty(s), kConsumerWarps);
      mbar_init(bars.v_empty(s), kConsumerWarps);
    }
    mbar_init_fence();
  }
  __syncthreads();

  // 384 threads leave 168 registers each; the producers need few, so they hand theirs to the
  // consumers (8 warps x 224 + 4 warps x 56 = the SM's 64K registers, less 1K).
  if (warp >= kConsumerWarps) {
    setmaxnreg_dec<56>();
    produce<CacheT>(kv, t, smem, bars, warp - kConsumerWarps, lane);
  } else {
    setmaxnreg_inc<224>();
    consume(kv, t, smem, bars, warp, lane);
  }
}

}  // namespace prefill_sm90

template <typename CacheT>
cudaError_t launch_prefill_sm90(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles, cudaStream_t stream) {
  using namespace prefill_sm90;
  cudaError_t status = cudaFuncSetAttribute(prefill_sm90_kernel<CacheT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(kSmemBytes));
  if (status != cudaSuccess) return status;
  prefill_sm90_kernel<CacheT><<<dim3(kv.num_heads, num_tiles), kThreads, kSmemBytes, stream>>>(kv, tiles);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
