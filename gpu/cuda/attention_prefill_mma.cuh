// FlashAttention-2 style prefill on tensor cores (mma.sync m16n8k16, bf16 in, float32 accumulate),
// templated on the cache element (bf16, or e4m3 converted to bf16 as it lands in shared memory;
// kv_cache_element.cuh); attention_prefill.cu instantiates it for bf16, attention_prefill_fp8.cu
// for e4m3. Block = 64 consecutive queries (one half of a tile of kPrefillTileQueries) of one
// sequence and one query head; 4 warps, 16 query rows each.
// Key/value tiles of 64 rows are gathered from the paged cache with cp.async into shared memory,
// rows swizzled (16-byte chunk c of row r stored at c ^ (r % 8)) so that ldmatrix reads are free
// of bank conflicts. The next K tile loads while P·V runs; V loads while Q·K^T runs. Scores are
// kept in log2 units so the softmax uses exp2.
#pragma once

#include <cfloat>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/attention_device.cuh"
#include "gpu/cuda/bf16_pairs.cuh"
#include "gpu/cuda/kv_cache_element.cuh"

namespace zinfer::gpu::cuda {
namespace prefill_mma {


constexpr int kWarps = 4;
constexpr int kTileM = 64;                   // queries per block
constexpr int kSubTiles = kPrefillTileQueries / kTileM;  // blocks per tile
static_assert(kPrefillTileQueries % kTileM == 0);
constexpr int kTileN = 64;                   // keys per iteration
constexpr float kLog2e = 1.4426950408889634f;

__device__ inline uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy; src_bytes = 0 fills the destination with zeros.
__device__ inline void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ inline void ldmatrix_x4(uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ inline void ldmatrix_x4_trans(uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a (16x16, row) * b (16x8, col)
__device__ inline void mma_bf16(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Element offset of (row, 16-byte chunk) in a swizzled [rows, D] bf16 tile.
template <int D>
__device__ inline int swz(int row, int chunk) {
  return row * D + ((chunk ^ (row & 7)) * 8);
}

// Gathers key/value rows [n0, n0 + 64) of kv head kvh from the paged cache; rows >= kv_end are zero.
template <int D>
__device__ inline void load_kv_tile(__nv_bfloat16* dst, const __nv_bfloat16* cache, const int* bt, int n0,
                                    int kv_end, int kvh, const PagedKv& kv) {
  constexpr int kChunks = D / 8;
  for (int idx = threadIdx.x; idx < kTileN * kChunks; idx += kWarps * 32) {
    const int r = idx / kChunks, c = idx % kChunks;
    const int key = n0 + r;
    const __nv_bfloat16* src = cache;
    int bytes = 0;
    if (key < kv_end) {
      const int64_t slot = paged_slot(bt, key, kv.block_size);
      src = cache + (slot * kv.num_kv_heads + kvh) * D + c * 8;
      bytes = 16;
    }
    cp_async16(dst + swz<D>(r, c), src, bytes);
  }
}

// A K or V tile on its way into shared memory, in two steps placed where the kernel overlaps the
// load with compute: issue() starts it, land() finishes it before the barrier that publishes it.
// bf16: cp.async (land has nothing to do; the kernel's cp.async waits cover it). fp8: each thread
// loads its chunks' codes into registers, and land() converts them to bf16 (exact) into the
// swizzled tile, so the MMAs read the same layout either way.
template <int D, typename CacheT>
struct TileLoad;

template <int D>
struct TileLoad<D, __nv_bfloat16> {
  __device__ __forceinline__ void issue(__nv_bfloat16* dst, const __nv_bfloat16* cache, const int* bt, int n0,
                                        int kv_end, int kvh, const PagedKv& kv) {
    load_kv_tile<D>(dst, cache, bt, n0, kv_end, kvh, kv);
  }
  __device__ __forceinline__ void land(__nv_bfloat16*) {}
};

template <int D>
struct TileLoad<D, __nv_fp8_e4m3> {
  static constexpr int kChunks = D / 8;
  static constexpr int kPerThread = kTileN * kChunks / (kWarps * 32);
  static_assert(kTileN * kChunks % (kWarps * 32) == 0);
  uint2 raw[kPerThread];
  __device__ __forceinline__ void issue(__nv_bfloat16*, const __nv_fp8_e4m3* cache, const int* bt, int n0, int kv_end,
                                        int kvh, const PagedKv& kv) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = threadIdx.x + i * kWarps * 32;
      const int r = idx / kChunks, c = idx % kChunks;
      const int key = n0 + r;
      if (key < kv_end) {
        const int64_t slot = paged_slot(bt, key, kv.block_size);
        raw[i] = *reinterpret_cast<const uint2*>(cache + (slot * kv.num_kv_heads + kvh) * D + c * 8);
      } else {
        raw[i] = make_uint2(0, 0);  // rows past the keys are zero, never stale NaNs
      }
    }
  }
  __device__ __forceinline__ void land(__nv_bfloat16* dst) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = threadIdx.x + i * kWarps * 32;
      const int r = idx / kChunks, c = idx % kChunks;
      *reinterpret_cast<uint4*>(dst + swz<D>(r, c)) = e4m3x8_to_bf16x8(raw[i]);
    }
  }
};

// Blocks per SM the registers are limited for: at most 128 registers so that 4 blocks (16 warps)
// share an SM, where the few spilled bytes cost less than the lost occupancy; an fp8 cache at
// head dim 128 holds a K and a V tile's codes in registers while it computes (32 more), which at
// 128 spilled about 900 bytes per thread, so it runs 3 blocks per SM instead.
template <int D, typename CacheT>
constexpr int kMinBlocks = sizeof(CacheT) == 1 && D == 128 ? 3 : 4;

template <int D, typename CacheT>
__global__ void __launch_bounds__(kWarps * 32, (kMinBlocks<D, CacheT>)) prefill_kernel(PagedKv kv, const int32_t* tiles) {
  constexpr int kChunks = D / 8;
  constexpr int kDTiles = D / 8;  // n-tiles of the output
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* sK = sQ + kTileM * D;
  __nv_bfloat16* sV = sK + kTileN * D;

  // Blocks start in order x (head) fastest, then y (64-query part of a tile): later parts of a
  // sequence see more keys, so they go first, with all heads of a part together (they share K/V
  // rows in L2).
  const int part = gridDim.y - 1 - blockIdx.y;
  const int tile = part / kSubTiles, sub = part % kSubTiles;
  const int first = tiles[3 * tile] + sub * kTileM;
  const int nq = min(kTileM, tiles[3 * tile + 1] - sub * kTileM);
  const int seq = tiles[3 * tile + 2];
  if (nq <= 0) return;
  const int h = blockIdx.x;
  const int kvh = h / (kv.num_heads / kv.num_kv_heads);
  const int pos0 = kv.positions[first];
  const int kv_end = pos0 + nq;
  // With a sliding window, keys before the first query's window are never visible: the key loop
  // starts there (skipping the tiles wholly outside it) and masks the window's edge per query.
  const int window = kv.sliding_window;
  const int kv_begin = window > 0 ? max(0, pos0 - window + 1) : 0;
  const int* bt = kv.block_tables + kv.seq_block_offset[seq];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const CacheT* k_cache = k_cache_of<CacheT>(kv);
  const CacheT* v_cache = v_cache_of<CacheT>(kv);
  TileLoad<D, CacheT> k_load, v_load;

  for (int idx = threadIdx.x; idx < kTileM * kChunks; idx += kWarps * 32) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool valid = r < nq;
    const __nv_bfloat16* src =
        valid ? kv.q + (static_cast<int64_t>(first + r) * kv.num_heads + h) * D + c * 8 : kv.q;
    cp_async16(sQ + swz<D>(r, c), src, valid ? 16 : 0);
  }
  k_load.issue(sK, k_cache, bt, kv_begin, kv_end, kvh, kv);
  cp_async_commit();

  const float sscale = kv.scale * kLog2e * kv.k_scale;  // k_scale: 1 for bf16
  float o[kDTiles][4];
#pragma unroll
  for (int j = 0; j < kDTiles; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  float m_row[2] = {-INFINITY, -INFINITY};
  float l_row[2] = {0.f, 0.f};
  const int row_a = warp * 16 + lane / 4;  // this thread's two rows: row_a and row_a + 8
  const int qpos[2] = {pos0 + row_a, pos0 + row_a + 8};

  for (int n0 = kv_begin; n0 < kv_end; n0 += kTileN) {
    v_load.issue(sV, v_cache, bt, n0, kv_end, kvh, kv);
    cp_async_commit();
    k_load.land(sK);
    cp_async_wait<1>();  // Q and this K tile have landed
    __syncthreads();

    float s[kTileN / 8][4];
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t a[4];
      ldmatrix_x4(a, sQ + swz<D>(warp * 16 + (lane % 16), 2 * kk + lane / 16));
#pragma unroll
      for (int p = 0; p < kTileN / 16; ++p) {
        uint32_t b[4];
        ldmatrix_x4(b, sK + swz<D>(16 * p + (lane / 16) * 8 + lane % 8, 2 * kk + (lane / 8) % 2));
        mma_bf16(s[2 * p], a, b[0], b[1]);
        mma_bf16(s[2 * p + 1], a, b[2], b[3]);
      }
    }

    // Causal mask and the online softmax, per row (a quad of 4 lanes shares a row).
    float row_max[2] = {-INFINITY, -INFINITY};
    // Only tiles that reach past this warp's first query (the diagonal), past the last key, or
    // (with a window) below the window of this warp's last query need the mask; the test is
    // uniform across the warp.
    const bool need_mask = n0 + kTileN - 1 > pos0 + warp * 16 || n0 + kTileN > kv_end ||
                           (window > 0 && n0 <= pos0 + warp * 16 + 15 - window);
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e >> 1;
        s[j][e] *= sscale;
        if (need_mask) {
          const int key = n0 + 8 * j + (lane % 4) * 2 + (e & 1);
          if (key > qpos[r] || key >= kv_end || (window > 0 && key <= qpos[r] - window)) s[j][e] = -INFINITY;
        }
        row_max[r] = fmaxf(row_max[r], s[j][e]);
      }
    }
    float corr[2], m_use[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(0xffffffffu, row_max[r], 1));
      row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(0xffffffffu, row_max[r], 2));
      const float m_new = fmaxf(m_row[r], row_max[r]);
      m_use[r] = m_new == -INFINITY ? 0.f : m_new;  // a row with nothing visible yet
      corr[r] = fast_exp2(m_row[r] - m_use[r]);
      m_row[r] = m_new;
      l_row[r] *= corr[r];
    }
#pragma unroll
    for (int j = 0; j < kDTiles; ++j) {
      o[j][0] *= corr[0];
      o[j][1] *= corr[0];
      o[j][2] *= corr[1];
      o[j][3] *= corr[1];
    }
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = fast_exp2(s[j][e] - m_use[e >> 1]);
        l_row[e >> 1] += s[j][e];
      }
    }

    __syncthreads();  // every warp is done reading sK
    const bool more = n0 + kTileN < kv_end;
    if (more) k_load.issue(sK, k_cache, bt, n0 + kTileN, kv_end, kvh, kv);
    cp_async_commit();
    v_load.land(sV);
    cp_async_wait<1>();  // this V tile has landed
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < kTileN / 16; ++kk) {
      uint32_t a[4];
      a[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
      a[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
      a[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      a[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
      for (int p = 0; p < D / 16; ++p) {
        uint32_t b[4];
        ldmatrix_x4_trans(b, sV + swz<D>(16 * kk + ((lane / 8) % 2) * 8 + lane % 8, 2 * p + lane / 16));
        mma_bf16(o[2 * p], a, b[0], b[1]);
        mma_bf16(o[2 * p + 1], a, b[2], b[3]);
      }
    }
    __syncthreads();  // every warp is done reading sV
  }
  cp_async_wait<0>();

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l_row[r] += __shfl_xor_sync(0xffffffffu, l_row[r], 1);
    l_row[r] += __shfl_xor_sync(0xffffffffu, l_row[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row_a + 8 * r;
    if (row >= nq) continue;
    const float inv_l = 1.f / l_row[r] * kv.v_scale;  // v_scale: 1 for bf16
    __nv_bfloat16* dst = kv.out + (static_cast<int64_t>(first + row) * kv.num_heads + h) * D + (lane % 4) * 2;
#pragma unroll
    for (int j = 0; j < kDTiles; ++j) {
      *reinterpret_cast<__nv_bfloat162*>(dst + 8 * j) =
          __floats2bfloat162_rn(o[j][2 * r] * inv_l, o[j][2 * r + 1] * inv_l);
    }
  }
}

template <int D, typename CacheT>
cudaError_t launch_for_dim(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles, cudaStream_t stream) {
  const size_t smem = static_cast<size_t>(kTileM + 2 * kTileN) * D * sizeof(__nv_bfloat16);
  cudaError_t status = cudaFuncSetAttribute(prefill_kernel<D, CacheT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem));
  if (status != cudaSuccess) return status;
  prefill_kernel<D, CacheT><<<dim3(kv.num_heads, num_tiles * kSubTiles), kWarps * 32, smem, stream>>>(kv, tiles);
  return cudaGetLastError();
}

}  // namespace prefill_mma

// head_dim 64 or 128 (else cudaErrorInvalidValue).
template <typename CacheT>
cudaError_t launch_prefill_mma(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles, cudaStream_t stream) {
  switch (kv.head_dim) {
    case 64: return prefill_mma::launch_for_dim<64, CacheT>(kv, tiles, num_tiles, stream);
    case 128: return prefill_mma::launch_for_dim<128, CacheT>(kv, tiles, num_tiles, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace zinfer::gpu::cuda
