// The kernel of fp8_mma.h, instantiated per MF (8-row pieces of x) and CHUNK in fp8_mma_mf*.cu.
// A block of kWarps warps owns kWarps · 16 outputs and one split of the inputs, walked in chunks
// of CHUNK inputs: x[rows, chunk] staged in shared memory by cp.async (double-buffered, rows past
// m zero), the lanes' weight bytes of the next chunk already in registers. The weights in flight
// are what bounds the kernel at few rows (HBM latency times bandwidth is ~30 KB per SM), so the
// one- and two-fragment instantiations take 256-input chunks (128 bytes a lane in flight), the
// larger ones, whose accumulators need the registers, 128-input chunks.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/e4m3_widen.cuh"
#include "gpu/cuda/fp8_mma.h"
#include "gpu/cuda/programmatic_launch.cuh"
#include "gpu/cuda/skinny_mma.cuh"
#include "gpu/cuda/streamed_load.cuh"

namespace zinfer::gpu::cuda::fp8_detail {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = kWarps * 16;  // outputs per block
// f16 elements per staged row of a CHUNK-input chunk (16 bytes of padding).
template <int CHUNK>
__host__ __device__ constexpr int stride() {
  return CHUNK + 8;
}

template <int MF, int CHUNK>
__host__ __device__ constexpr int smem_bytes() {
  return 2 * MF * 8 * stride<CHUNK>() * 2;
}

struct Params {
  Fp8MmaArgs a;
  int32_t groups;
  int32_t steps_per_split;  // 64-input steps per split
};

// Stages x[0..MF·8)[k0 .. k0 + steps·64) into xs; rows ≥ m and columns past the steps are zero.
template <int MF, int kChunk>
__device__ __forceinline__ void stage_x(const Params& p, __half* xs, int32_t k0, int32_t steps) {
  constexpr int kStride = stride<kChunk>();
  constexpr int kPieces = kChunk / 8;  // 16-byte pieces per row
  for (int i = threadIdx.x; i < MF * 8 * kPieces; i += kThreads) {
    const int row = i / kPieces, piece = i % kPieces;
    const bool valid = row < p.a.m && piece < steps * 8;
    const __half* src = valid ? p.a.x + static_cast<size_t>(row) * p.a.k + k0 + piece * 8 : p.a.x;
    cp_async16(smem_u32(xs + row * kStride + piece * 8), src, valid ? 16u : 0u);
  }
  cp_async_commit();
}

template <int MF, int kChunk>
__global__ void __launch_bounds__(kThreads) fp8_mma_kernel(Params p) {
  constexpr int kStride = stride<kChunk>(), kSteps = kChunk / 64, kBuffer = MF * 8 * kStride;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* xs_base = reinterpret_cast<__half*>(smem_raw);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t N = p.a.n, K = p.a.k;
  const int32_t ntiles = N / 16, ksteps = K / 64;
  const int32_t ntile = blockIdx.x * kWarps + warp;
  const bool active = ntile < ntiles;
  const int32_t step0 = blockIdx.y * p.steps_per_split;
  const int32_t steps = max(0, min(p.steps_per_split, ksteps - step0));
  const int32_t chunks = (steps + kSteps - 1) / kSteps;
  const int r = lane / 4, t = lane % 4;
  const int32_t n_r = (active ? ntile : 0) * 16 + r;

  // The lane's bytes of step s: rows n_r and n_r + 8, inputs 16t .. 16t + 15 of the step.
  const unsigned char* w_r = reinterpret_cast<const unsigned char*>(p.a.w) + static_cast<size_t>(n_r) * K + 16 * t;
  const size_t row8 = static_cast<size_t>(8) * K;
  uint4 cur[kSteps][2], nxt[kSteps][2];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const bool on = active && s < steps;
    const unsigned char* at = w_r + static_cast<size_t>(step0 + s) * 64;
    cur[s][0] = on ? load_streamed(at) : make_uint4(0, 0, 0, 0);
    cur[s][1] = on ? load_streamed(at + row8) : make_uint4(0, 0, 0, 0);
  }

  float total[MF][4];
#pragma unroll
  for (int j = 0; j < MF; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) total[j][e] = 0.f;

  wait_for_previous_kernel();  // x, s_x (and the residual) come from the kernels before
  if (chunks > 0) stage_x<MF, kChunk>(p, xs_base, step0 * 64, min(steps, kSteps));

  for (int32_t c = 0; c < chunks; ++c) {
    const int32_t cstep = step0 + c * kSteps;
    if (c + 1 < chunks) {
      const int32_t nsteps = min(kSteps, steps - (c + 1) * kSteps);
      stage_x<MF, kChunk>(p, xs_base + ((c + 1) & 1) * kBuffer, (cstep + kSteps) * 64, nsteps);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const bool on = active && s < nsteps;
        const unsigned char* at = w_r + static_cast<size_t>(cstep + kSteps + s) * 64;
        nxt[s][0] = on ? load_streamed(at) : make_uint4(0, 0, 0, 0);
        nxt[s][1] = on ? load_streamed(at + row8) : make_uint4(0, 0, 0, 0);
      }
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const __half* xs = xs_base + (c & 1) * kBuffer + r * kStride + 16 * t;
    if (active) {
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        // Steps past the chunk's end have zero weights and zero x: they add 0.
        const uint32_t lo[4] = {cur[s][0].x, cur[s][0].y, cur[s][0].z, cur[s][0].w};
        const uint32_t hi[4] = {cur[s][1].x, cur[s][1].y, cur[s][1].z, cur[s][1].w};
        float acc[2][MF][4];
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j = 0; j < MF; ++j) acc[h][j][0] = acc[h][j][1] = acc[h][j][2] = acc[h][j][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const uint32_t a[4] = {e4m3x2_to_f16x2(static_cast<uint16_t>(lo[kk])), e4m3x2_to_f16x2(static_cast<uint16_t>(hi[kk])),
                                 e4m3x2_to_f16x2(static_cast<uint16_t>(lo[kk] >> 16)),
                                 e4m3x2_to_f16x2(static_cast<uint16_t>(hi[kk] >> 16))};
#pragma unroll
          for (int j = 0; j < MF; ++j) {
            const uint2 b = *reinterpret_cast<const uint2*>(xs + j * 8 * kStride + s * 64 + 4 * kk);
            mma_f16(acc[kk & 1][j], a, b.x, b.y);  // two sets: an mma does not wait for the last
          }
        }
        if (p.groups == 1) {
#pragma unroll
          for (int j = 0; j < MF; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) total[j][e] += acc[0][j][e] + acc[1][j][e];
        } else {  // block-wise: the step lies in one group (groups are multiples of 64 inputs)
          // A step past the inputs' end (zero weights) takes the last group's scales: in bounds.
          const int32_t G = p.groups, g = min((cstep + s) * 64 / p.a.group, G - 1);
          const float sw_r = __ldg(p.a.s_w + static_cast<size_t>(n_r) * G + g);
          const float sw_r8 = __ldg(p.a.s_w + static_cast<size_t>(n_r + 8) * G + g);
#pragma unroll
          for (int j = 0; j < MF; ++j) {
            const int32_t m0 = j * 8 + 2 * t;
            const float sx0 = m0 < p.a.m ? p.a.s_x[static_cast<size_t>(m0) * G + g] : 0.f;
            const float sx1 = m0 + 1 < p.a.m ? p.a.s_x[static_cast<size_t>(m0 + 1) * G + g] : 0.f;
            total[j][0] = fmaf(acc[0][j][0] + acc[1][j][0], sx0 * sw_r, total[j][0]);
            total[j][1] = fmaf(acc[0][j][1] + acc[1][j][1], sx1 * sw_r, total[j][1]);
            total[j][2] = fmaf(acc[0][j][2] + acc[1][j][2], sx0 * sw_r8, total[j][2]);
            total[j][3] = fmaf(acc[0][j][3] + acc[1][j][3], sx1 * sw_r8, total[j][3]);
          }
        }
      }
    }
    __syncthreads();  // the buffer is staged again two chunks on
#pragma unroll
    for (int s = 0; s < kSteps; ++s) cur[s][0] = nxt[s][0], cur[s][1] = nxt[s][1];
  }
  allow_next_kernel();

  if (p.a.splits > 1 && !sum_splits<MF>(total, p.a.partials, p.a.counters, p.a.splits, ntiles, ntile, active)) return;
  if (!active) return;
  for_each_output<MF>(total, p.a.m, n_r, t, [&](int32_t m, int32_t n, float sum) {
    // One group: its sum times s_x · s_w, in the CPU's order (fp8.h).
    const float v = p.groups == 1 ? sum * (p.a.s_x[m] * p.a.s_w[n]) : sum;
    const size_t at = static_cast<size_t>(m) * N + n;
    if (p.a.out.add_f32 != nullptr) p.a.out.add_f32[at] += v;
    else p.a.out.bf16[at] = __float2bfloat16(v);
  });
}

}  // namespace zinfer::gpu::cuda::fp8_detail
