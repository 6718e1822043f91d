// The W4A16 tensor-core kernel of w4_gemm.h; instantiated per MF (8-row fragments of x) in its own
// .cu files. Layouts are those of gpu/quant/int4_tiles.h.
//
// Work: a block of kWarps warps owns kWarps · 16 outputs and one split of the inputs; each warp
// owns 16 outputs (one mma A tile per 16 inputs). The block walks its inputs in chunks of kChunk:
//   - x[rows, chunk] is staged in shared memory by cp.async, double-buffered, rows past m zero
//     (through perm for act-order layers, by plain loads);
//   - each lane holds the next chunk's int4 words in registers (4 × 16 bytes), loaded a chunk
//     ahead: the weights are read once, straight from HBM to registers, and nothing waits on them
//     but the mma that uses them;
//   - B fragments come from shared memory by ldmatrix (the row stride is padded by 16 bytes so the
//     8 rows of a matrix fall in different banks).
// A fragment register j is (128 + q) from one shift and one lop3 (mask and the exponent bits of
// 128.0), minus bf16(128 + zero): an exact small integer. A group's products are summed in float32
// and scaled once at the group's end, in float32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/programmatic_launch.cuh"
#include "gpu/cuda/w4_gemm.h"

namespace zinfer::gpu::cuda::w4_detail {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kChunk = 256;                 // inputs staged per buffer
constexpr int kStepsPerChunk = kChunk / 64; // 16-byte weight loads per lane per chunk
constexpr int kRowPad = 8;                  // bf16 elements of padding per staged row

template <int MF>
constexpr int smem_bytes() {
  return 2 * MF * 8 * (kChunk + kRowPad) * 2;
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t lop3_mask_or(uint32_t v) {
  uint32_t r;
  // (v & 0x000F000F) | 0x43004300: immLut 0xEA = (a & b) | c
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(r) : "r"(v), "r"(0x000F000Fu), "r"(0x43004300u));
  return r;
}

__device__ __forceinline__ uint32_t bf16x2_sub(uint32_t a, uint32_t b) {
  const __nv_bfloat162 d = __hsub2(*reinterpret_cast<const __nv_bfloat162*>(&a),
                                   *reinterpret_cast<const __nv_bfloat162*>(&b));
  return *reinterpret_cast<const uint32_t*>(&d);
}

// A fragment (q − zero) of one tile's word; zr / zr8: bf16x2(128 + zero) of rows r and r + 8.
__device__ __forceinline__ void dequantize_tile(uint32_t w, uint32_t zr, uint32_t zr8, uint32_t (&a)[4]) {
  a[0] = bf16x2_sub(lop3_mask_or(w), zr);
  a[1] = bf16x2_sub(lop3_mask_or(w >> 4), zr8);
  a[2] = bf16x2_sub(lop3_mask_or(w >> 8), zr);
  a[3] = bf16x2_sub(lop3_mask_or(w >> 12), zr8);
}

__device__ __forceinline__ uint4 load_words(const uint4* p) {
  uint4 v;
  // Streamed once: no L1 allocation, the lines go to L2 only as they pass.
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

struct Params {
  W4Weight w;
  const __nv_bfloat16* x;
  W4Output output;
  __nv_bfloat16* y;
  float* residual;
  int32_t m;
  int32_t splits;
  int32_t steps_per_split;  // 64-input steps per split
  float* partials;
  uint32_t* counters;
};

// Stages x[0..MF·8)[k0 .. k0 + steps·64) into xs (row stride kChunk + kRowPad); rows ≥ m and
// columns past the chunk's end are zero.
template <int MF>
__device__ __forceinline__ void stage_x(const Params& p, __nv_bfloat16* xs, int32_t k0, int32_t steps) {
  constexpr int kPieces = kChunk / 8;  // 16-byte pieces per row
  const int32_t K = p.w.k;
  for (int i = threadIdx.x; i < MF * 8 * kPieces; i += kThreads) {
    const int row = i / kPieces, piece = i % kPieces;
    __nv_bfloat16* dst = xs + row * (kChunk + kRowPad) + piece * 8;
    const bool valid = row < p.m && piece < steps * 8;
    if (p.w.perm == nullptr) {
      const __nv_bfloat16* src = valid ? p.x + static_cast<size_t>(row) * K + k0 + piece * 8 : p.x;
      cp_async16(smem_u32(dst), src, valid ? 16u : 0u);
    } else {
      uint4 v = make_uint4(0, 0, 0, 0);
      if (valid) {
        __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&v);
        const __nv_bfloat16* xr = p.x + static_cast<size_t>(row) * K;
        const int32_t* perm = p.w.perm + k0 + piece * 8;
#pragma unroll
        for (int j = 0; j < 8; ++j) e[j] = xr[perm[j]];
      }
      *reinterpret_cast<uint4*>(dst) = v;
    }
  }
  cp_async_commit();
}

template <int MF>
__global__ void __launch_bounds__(kThreads) w4_gemm_kernel(Params p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* xs = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  constexpr int kBuf = MF * 8 * (kChunk + kRowPad);
  __shared__ uint32_t last_block;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t N = p.w.n, K = p.w.k;
  const int32_t ntiles = N / 16, ksteps = K / 64;
  const int32_t ntile = blockIdx.x * kWarps + warp;
  const bool active = ntile < ntiles;
  const int32_t split = blockIdx.y;
  const int32_t step0 = split * p.steps_per_split;
  const int32_t steps = max(0, min(p.steps_per_split, ksteps - step0));
  const int32_t chunks = (steps + kStepsPerChunk - 1) / kStepsPerChunk;
  const int r = lane / 4;  // the fragment's rows r and r + 8

  const uint4* wp = p.w.words + (static_cast<size_t>(active ? ntile : 0) * ksteps + step0) * 32 + lane;
  uint4 cur[kStepsPerChunk], nxt[kStepsPerChunk];
#pragma unroll
  for (int s = 0; s < kStepsPerChunk; ++s)
    cur[s] = (active && s < steps) ? load_words(wp + s * 32) : make_uint4(0, 0, 0, 0);

  // Group state: the current group's zeros (for the subtraction) and scales (at its end).
  const int32_t gs = p.w.group_size;
  const int32_t n_r = (active ? ntile : 0) * 16 + r;
  int32_t group = (step0 * 64) / gs;
  int32_t group_end = (group + 1) * gs;
  uint32_t zr = p.w.zeros[static_cast<size_t>(group) * N + n_r], zr8 = p.w.zeros[static_cast<size_t>(group) * N + n_r + 8];
  float sr = p.w.scales[static_cast<size_t>(group) * N + n_r], sr8 = p.w.scales[static_cast<size_t>(group) * N + n_r + 8];

  float acc[MF][4], total[MF][4];
#pragma unroll
  for (int j = 0; j < MF; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.f, total[j][e] = 0.f;

  wait_for_previous_kernel();  // x (and the residual) come from the kernels before
  if (chunks > 0) stage_x<MF>(p, xs, step0 * 64, min(steps, kStepsPerChunk));

  // ldmatrix addresses: lane i gives row i % 8 of matrix i / 8; matrices (tile lo, tile hi, next
  // tile lo, next tile hi) of fragment j.
  const int mi = lane / 8, mr = lane % 8;
  const uint32_t lane_off = static_cast<uint32_t>((mr * (kChunk + kRowPad) + (mi & 1) * 8 + (mi >> 1) * 16) * 2);

  for (int32_t c = 0; c < chunks; ++c) {
    const int32_t cstep = step0 + c * kStepsPerChunk;
    const int32_t csteps = min(kStepsPerChunk, steps - c * kStepsPerChunk);
    if (c + 1 < chunks) {
      const int32_t nsteps = min(kStepsPerChunk, steps - (c + 1) * kStepsPerChunk);
      stage_x<MF>(p, xs + ((c + 1) & 1) * kBuf, (cstep + kStepsPerChunk) * 64, nsteps);
#pragma unroll
      for (int s = 0; s < kStepsPerChunk; ++s)
        nxt[s] = (active && s < nsteps) ? load_words(wp + ((c + 1) * kStepsPerChunk + s) * 32)
                                        : make_uint4(0, 0, 0, 0);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const uint32_t base = smem_u32(xs + (c & 1) * kBuf) + lane_off;
#pragma unroll
    for (int s = 0; s < kStepsPerChunk; ++s) {
      if (s < csteps && active) {
        const uint32_t words[4] = {cur[s].x, cur[s].y, cur[s].z, cur[s].w};
#pragma unroll
        for (int pair = 0; pair < 2; ++pair) {
          uint32_t b[MF][4];
#pragma unroll
          for (int j = 0; j < MF; ++j)
            ldmatrix_x4(base + static_cast<uint32_t>((j * 8 * (kChunk + kRowPad) + s * 64 + pair * 32) * 2), b[j][0],
                        b[j][1], b[j][2], b[j][3]);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int32_t k = (cstep + s) * 64 + pair * 32 + h * 16;
            if (k >= group_end) {  // the group ends: scale its sum, take the next group's values
#pragma unroll
              for (int j = 0; j < MF; ++j) {
                total[j][0] += acc[j][0] * sr, total[j][1] += acc[j][1] * sr;
                total[j][2] += acc[j][2] * sr8, total[j][3] += acc[j][3] * sr8;
                acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
              }
              group = k / gs;
              group_end = (group + 1) * gs;
              const size_t at = static_cast<size_t>(group) * N + n_r;
              zr = p.w.zeros[at], zr8 = p.w.zeros[at + 8];
              sr = p.w.scales[at], sr8 = p.w.scales[at + 8];
            }
            uint32_t a[4];
            dequantize_tile(words[pair * 2 + h], zr, zr8, a);
#pragma unroll
            for (int j = 0; j < MF; ++j) mma_bf16(acc[j], a, b[j][2 * h], b[j][2 * h + 1]);
          }
        }
      }
    }
    __syncthreads();  // the buffer is staged again two chunks on
#pragma unroll
    for (int s = 0; s < kStepsPerChunk; ++s) cur[s] = nxt[s];
  }
  allow_next_kernel();
#pragma unroll
  for (int j = 0; j < MF; ++j) {
    total[j][0] += acc[j][0] * sr, total[j][1] += acc[j][1] * sr;
    total[j][2] += acc[j][2] * sr8, total[j][3] += acc[j][3] * sr8;
  }

  if (p.splits > 1) {
    // Partials [split][ntile][MF·4][32 lanes]: each lane writes and reads back its own values.
    const size_t tile_floats = static_cast<size_t>(MF) * 4 * 32;
    if (active) {
      float* mine = p.partials + (static_cast<size_t>(split) * ntiles + ntile) * tile_floats + lane;
#pragma unroll
      for (int j = 0; j < MF; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) mine[(j * 4 + e) * 32] = total[j][e];
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
      const uint32_t done = atomicAdd(p.counters + blockIdx.x, 1u);
      last_block = done == static_cast<uint32_t>(p.splits - 1);
      if (last_block) p.counters[blockIdx.x] = 0;  // ready for the next launch (and graph replay)
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    if (active) {
#pragma unroll
      for (int j = 0; j < MF; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) total[j][e] = 0.f;
      for (int32_t s = 0; s < p.splits; ++s) {  // split order: the sum does not depend on timing
        const float* part = p.partials + (static_cast<size_t>(s) * ntiles + ntile) * tile_floats + lane;
#pragma unroll
        for (int j = 0; j < MF; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) total[j][e] += __ldcg(part + (j * 4 + e) * 32);
      }
    }
  }
  if (!active) return;
  const int t = lane % 4;
#pragma unroll
  for (int j = 0; j < MF; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int32_t m = j * 8 + 2 * t + (e & 1);
      const int32_t n = n_r + (e >> 1) * 8;
      if (m >= p.m) continue;
      const size_t at = static_cast<size_t>(m) * N + n;
      if (p.output == W4Output::kBf16) p.y[at] = __float2bfloat16(total[j][e]);
      else p.residual[at] += total[j][e];
    }
}

}  // namespace zinfer::gpu::cuda::w4_detail
