// The W4A16 kernel of launch_w4_gemm for 1-8 rows of x (decode steps; MF = 1 fragment of 8 rows
// of x, w4_decode_mf1.cu). Layouts are those of gpu/quant/int4_tiles.h.
//
// At a few rows the int4 words are the only real traffic (a quarter of bf16's bytes), so the
// kernel is fast only if it issues few instructions per weight byte: at HBM's rate an SM receives
// 128 bytes (one 16 × 16 tile) about every 8 cycles, 32 issue slots of its four schedulers. Hence:
//   - A fragment register j is 128 + q straight from one shift and one lop3 (the exponent bits of
//     128.0 make the mantissa's low bits the integer q): 7 instructions a word, no subtraction.
//     The zero point comes out after the mma: Σ (q − z)·x = Σ (128 + q)·x − (128 + z)·Σx, with
//     Σx of each unit (below) and row of x summed once per block while staging.
//   - The mma of P steps (P = 2 where groups are multiples of 128 inputs, else 1: groups are
//     multiples of 64) sum in float32, and the sum is scaled into the total once.
//   - x (the block's input range, its m rows only), the steps' scales and zeros are staged in
//     shared memory once, before the loop: no barrier in the loop. ldmatrix lanes of rows past m
//     read an all-zero row.
//   - Each lane keeps kDepth 16-byte loads of words in flight in registers (a warp 512 bytes a
//     step), issued kDepth steps ahead; the first before the wait for the previous kernel. A
//     slot is refilled at its step's start or, on long splits, after the step's products (kLate,
//     w4_decode_launch.cuh). (A cp.async ring in shared memory, deeper at fewer registers, was
//     slower at one row.)
// A block is kWarps warps of 16 outputs each over one split of the inputs; the grid fills the
// GPU with splits, and the splits' float32 partials are added in split order (skinny_mma.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/programmatic_launch.cuh"
#include "gpu/cuda/skinny_mma.cuh"
#include "gpu/cuda/streamed_load.cuh"
#include "gpu/cuda/w4/w4_dequantize.cuh"
#include "gpu/cuda/w4/w4_kernel_params.cuh"
#include "gpu/cuda/w4_gemm.h"

namespace zinfer::gpu::cuda::w4_decode {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kOutputs = kWarps * 16;  // per block

// Shared memory of a block whose split has S steps of 64 inputs (U = S / P units of P steps that
// share a scale), m rows of x:
//   scales [U][kOutputs] float, zeros [U][kOutputs] uint32 (bf16x2 of 128 + zero),
//   sums [U][MF·8] float (Σx of each unit and row; 0 past m),
//   x [1 + m][S·64 + 8] bf16: row 0 all zeros, row 1 + i = x row i (the 16-byte pad puts the 8
//   rows of an ldmatrix in different banks).
__host__ __device__ constexpr int x_stride(int S) { return S * 64 + 8; }
__host__ __device__ constexpr int table_bytes(int U) { return 2 * U * kOutputs * 4; }
__host__ __device__ constexpr int sums_bytes(int U, int mf) { return U * mf * 8 * 4; }
__host__ __device__ constexpr int smem_bytes(int S, int P, int m, int mf) {
  return table_bytes(S / P) + sums_bytes(S / P, mf) + (1 + m) * x_stride(S) * 2;
}

using Params = W4KernelParams;  // steps_per_split: S

// Register j of a tile's A fragment: bf16x2 128 + q of nibbles j and j + 4.
__device__ __forceinline__ void w4_fragment_128(uint32_t w, uint32_t (&a)[4]) {
  a[0] = w4_lop3_mask_or(w);
  a[1] = w4_lop3_mask_or(w >> 4);
  a[2] = w4_lop3_mask_or(w >> 8);
  a[3] = w4_lop3_mask_or(w >> 12);
}

// The block's scales and zeros of steps [step0, step0 + steps), one entry per unit of P steps
// (its group's): a warp per unit, a lane per 4 outputs; outputs past N and units past the split
// read as zeros.
template <int P>
__device__ __forceinline__ void stage_tables(const Params& p, unsigned char* tables, int32_t step0, int32_t steps,
                                             int32_t U) {
  static_assert(kOutputs == 4 * 32, "a lane stages 4 outputs of a step");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t N = p.w.n, n = blockIdx.x * kOutputs + lane * 4;
  float* scales = reinterpret_cast<float*>(tables);
  uint32_t* zeros = reinterpret_cast<uint32_t*>(scales + U * kOutputs);
  for (int u = warp; u < U; u += kWarps) {
    const bool valid = n < N && u * P < steps;
    const size_t src = valid ? static_cast<size_t>((step0 + u * P) * 64 / p.w.group_size) * N + n : 0;
    cp_async16(smem_u32(scales + u * kOutputs + lane * 4), p.w.scales + src, valid ? 16u : 0u);
    cp_async16(smem_u32(zeros + u * kOutputs + lane * 4), p.w.zeros + src, valid ? 16u : 0u);
  }
}

// x rows 0..m) of inputs [k0, k0 + steps·64) into rows 1..m of xs; row 0 and columns past the
// split's inputs are zero. Act-order layers read x through perm.
__device__ __forceinline__ void stage_x(const Params& p, __nv_bfloat16* xs, int32_t k0, int32_t steps, int32_t S) {
  const int32_t K = p.w.k, stride = x_stride(S), pieces = stride / 8;  // 16-byte pieces per row
  for (int row = 0; row <= p.m; ++row)
    for (int piece = threadIdx.x; piece < pieces; piece += kThreads) {
      __nv_bfloat16* dst = xs + row * stride + piece * 8;
      const bool valid = row > 0 && piece < steps * 8;
      if (p.w.perm == nullptr) {
        const __nv_bfloat16* src = valid ? p.x + static_cast<size_t>(row - 1) * K + k0 + piece * 8 : p.x;
        cp_async16(smem_u32(dst), src, valid ? 16u : 0u);
      } else {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (valid) {
          __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&v);
          const __nv_bfloat16* xr = p.x + static_cast<size_t>(row - 1) * K;
          const int32_t* perm = p.w.perm + k0 + piece * 8;
#pragma unroll
          for (int j = 0; j < 8; ++j) e[j] = xr[perm[j]];
        }
        *reinterpret_cast<uint4*>(dst) = v;
      }
    }
}

// sums[u][r] = Σ of x row r over unit u's 64·P inputs, 0 for rows past m: 8 lanes a sum (8·P
// inputs each, then three shuffles), so that a block's 32 groups of 8 lanes sum 32 at once.
template <int MF, int P>
__device__ __forceinline__ void sum_x(const Params& p, const __nv_bfloat16* xs, float* sums, int32_t S) {
  const int group = threadIdx.x / 8, sub = threadIdx.x % 8;
  const int32_t U = S / P, pairs = U * p.m;  // (unit, row) with row < m
  for (int32_t i0 = 0; i0 < pairs; i0 += kThreads / 8) {
    const int32_t i = i0 + group;
    float v = 0.f;
    if (i < pairs) {
      const int32_t u = i / p.m, row = i % p.m;
#pragma unroll
      for (int h = 0; h < P; ++h) {
        const uint4 raw = *reinterpret_cast<const uint4*>(xs + (1 + row) * x_stride(S) + u * 64 * P + h * 64 + sub * 8);
        const __nv_bfloat162* e = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
        for (int j = 0; j < 4; ++j) v += __low2float(e[j]) + __high2float(e[j]);
      }
    }
#pragma unroll
    for (int o = 4; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (i < pairs && sub == 0) sums[(i / p.m) * MF * 8 + i % p.m] = v;
  }
  for (int32_t i = threadIdx.x; i < U * MF * 8; i += kThreads)
    if (i % (MF * 8) >= p.m) sums[i] = 0.f;
}

// kLate: a slot is refilled after the step's products instead of at its start (w4_decode_launch.cuh).
template <int MF, int P, int kDepth, bool kLate>
__global__ void __launch_bounds__(kThreads) w4_decode_kernel(Params p) {
  static_assert(kDepth % P == 0, "a unit's steps lie in one turn of the ring");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t N = p.w.n, K = p.w.k, S = p.steps_per_split, U = S / P;
  const int32_t ntiles = N / 16, ksteps = K / 64;
  const int32_t ntile = blockIdx.x * kWarps + warp;
  const bool active = ntile < ntiles;
  const int32_t step0 = blockIdx.y * S;
  const int32_t steps = max(0, min(S, ksteps - step0));

  const float* scales = reinterpret_cast<const float*>(smem_raw);
  const uint32_t* zeros = reinterpret_cast<const uint32_t*>(scales + U * kOutputs);
  float* sums = reinterpret_cast<float*>(smem_raw + table_bytes(U));
  __nv_bfloat16* xs = reinterpret_cast<__nv_bfloat16*>(smem_raw + table_bytes(U) + sums_bytes(U, MF));

  // Weights, scales and zeros do not depend on the kernels before: their loads start first.
  const uint4* wp = p.w.words + (static_cast<size_t>(active ? ntile : 0) * ksteps + step0) * 32 + lane;
  uint4 ring[kDepth];
#pragma unroll
  for (int d = 0; d < kDepth; ++d) ring[d] = (active && d < steps) ? load_streamed(wp + d * 32) : make_uint4(0, 0, 0, 0);
  stage_tables<P>(p, smem_raw, step0, steps, U);
  wait_for_previous_kernel();  // x (and the residual) come from the kernels before
  stage_x(p, xs, step0 * 64, steps, S);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  sum_x<MF, P>(p, xs, sums, S);
  __syncthreads();

  float total[MF][4];
#pragma unroll
  for (int j = 0; j < MF; ++j) total[j][0] = total[j][1] = total[j][2] = total[j][3] = 0.f;

  const int r = lane / 4, t = lane % 4;  // the fragments' rows r, r + 8 (outputs), columns 2t, 2t + 1 (rows of x)
  if (active) {
    // ldmatrix: lane i gives row i % 8 of matrix i / 8 (tile lo, tile hi, next tile lo, next
    // tile hi) of fragment j: x row 8j + i % 8, or the zero row past m.
    uint32_t base[MF];
#pragma unroll
    for (int j = 0; j < MF; ++j) {
      const int row = j * 8 + lane % 8, mi = lane / 8;
      const int srow = row < p.m ? 1 + row : 0;
      base[j] = smem_u32(xs + srow * x_stride(S) + (mi & 1) * 8 + (mi >> 1) * 16);
    }
    const int out = warp * 16 + r;
    const uint4* next = wp + kDepth * 32;
    float acc[MF][4];
    for (int32_t s0 = 0; s0 < steps; s0 += kDepth) {
#pragma unroll
      for (int d = 0; d < kDepth; ++d) {
        const int32_t s = s0 + d;
        if (s >= steps) break;  // steps is a multiple of P
        const uint32_t words[4] = {ring[d].x, ring[d].y, ring[d].z, ring[d].w};
        if (!kLate && s + kDepth < steps) ring[d] = load_streamed(next);
        if (d % P == 0) {
#pragma unroll
          for (int j = 0; j < MF; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        }
#pragma unroll
        for (int pair = 0; pair < 2; ++pair) {
          uint32_t b[MF][4];
#pragma unroll
          for (int j = 0; j < MF; ++j)
            ldmatrix_x4(base[j] + static_cast<uint32_t>((s * 64 + pair * 32) * 2), b[j][0], b[j][1], b[j][2], b[j][3]);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            uint32_t a[4];
            w4_fragment_128(words[pair * 2 + h], a);
#pragma unroll
            for (int j = 0; j < MF; ++j) mma_bf16(acc[j], a, b[j][2 * h], b[j][2 * h + 1]);
          }
        }
        if (kLate && s + kDepth < steps) ring[d] = load_streamed(next);
        next += 32;
        if (d % P != P - 1) continue;
        const int32_t u = s / P;
        const float sr = scales[u * kOutputs + out], sr8 = scales[u * kOutputs + out + 8];
        const float zr = __uint_as_float(zeros[u * kOutputs + out] << 16);
        const float zr8 = __uint_as_float(zeros[u * kOutputs + out + 8] << 16);
#pragma unroll
        for (int j = 0; j < MF; ++j) {
          const float2 sx = *reinterpret_cast<const float2*>(sums + u * MF * 8 + j * 8 + 2 * t);
          total[j][0] = fmaf(sr, fmaf(-zr, sx.x, acc[j][0]), total[j][0]);
          total[j][1] = fmaf(sr, fmaf(-zr, sx.y, acc[j][1]), total[j][1]);
          total[j][2] = fmaf(sr8, fmaf(-zr8, sx.x, acc[j][2]), total[j][2]);
          total[j][3] = fmaf(sr8, fmaf(-zr8, sx.y, acc[j][3]), total[j][3]);
        }
      }
    }
  }
  allow_next_kernel();

  if (p.splits > 1 && !sum_splits<MF>(total, p.partials, p.counters, p.splits, ntiles, ntile, active)) return;
  if (!active) return;
  const int32_t n_r = ntile * 16 + r;
  for_each_output<MF>(total, p.m, n_r, t, [&](int32_t m, int32_t n, float v) {
    const size_t at = static_cast<size_t>(m) * N + n;
    if (p.output == W4Output::kBf16) p.y[at] = __float2bfloat16(v);
    else p.residual[at] += v;
  });
}

}  // namespace zinfer::gpu::cuda::w4_decode
