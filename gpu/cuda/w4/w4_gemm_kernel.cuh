// The W4A16 tensor-core kernel of w4_gemm.h for 9-64 rows (the chunked kernel; up to 8 rows the
// decode kernel of w4_decode_kernel.cuh runs); instantiated per MF (8-row fragments of x) and
// CHUNK (inputs per staged chunk) in its own .cu files. Layouts are those of
// gpu/quant/int4_tiles.h.
//
// Work: a block of kWarps warps owns kWarps · 16 outputs and one split of the inputs; each warp
// owns 16 outputs (one mma A tile per 16 inputs). The block walks its inputs in chunks:
//   - x[rows, chunk] is staged in shared memory by cp.async, double-buffered, rows past m zero
//     (through perm for act-order layers, by plain loads);
//   - each lane holds the next chunk's int4 words in registers (CHUNK / 64 × 16 bytes), loaded a chunk
//     ahead: the weights are read once, straight from HBM to registers, and nothing waits on them
//     but the mma that uses them;
//   - B fragments come from shared memory by ldmatrix (the row stride is padded by 16 bytes so the
//     8 rows of a matrix fall in different banks).
// A fragment register j is (128 + q) from one shift and one lop3 (mask and the exponent bits of
// 128.0), minus bf16(128 + zero): an exact small integer. A group is a multiple of 64 inputs, so
// each 64-input step lies in one group: the step's four mma sum in float32 (two accumulator sets,
// so that an mma does not wait for the previous one) and the sum is scaled into the total once,
// in float32. The staging writes every step's scales and zeros beside x (copied from its
// group's), so the loop has no branch and the compiler interleaves one tile's dequantization
// with the previous tile's mma.
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

namespace zinfer::gpu::cuda::w4_detail {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = kWarps * 16;  // outputs per block
constexpr int kRowPad = 8;          // bf16 elements of padding per staged row

// Shared memory of one buffer (CHUNK inputs; CHUNK / 64 16-byte weight loads per lane): x
// [MF·8][CHUNK + pad] bf16, then per 64-input step the block's outputs' scales [CHUNK/64][64]
// float and zeros [CHUNK/64][64] uint32.
template <int MF, int CHUNK>
__host__ __device__ constexpr int x_bytes() {
  return MF * 8 * (CHUNK + kRowPad) * 2;
}
template <int MF, int CHUNK>
__host__ __device__ constexpr int buffer_bytes() {
  return x_bytes<MF, CHUNK>() + 2 * (CHUNK / 64) * kRows * 4;
}
template <int MF, int CHUNK>
__host__ __device__ constexpr int smem_bytes() {
  return 2 * buffer_bytes<MF, CHUNK>();
}

// The int4 words are read exactly once (streamed_load.cuh).
__device__ __forceinline__ uint4 load_words(const uint4* p) { return load_streamed(p); }

using Params = W4KernelParams;

// Stages x[0..MF·8)[k0 .. k0 + steps·64) into xs (row stride kChunk + kRowPad); rows ≥ m and
// columns past the chunk's end are zero.
template <int MF, int kChunk>
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
}

// Stages each step's scales and zeros (its group's) of the block's outputs: tables [steps][64],
// scales first; outputs past N and steps past the chunk's end read as zeros.
template <int kChunk>
__device__ __forceinline__ void stage_scales(const Params& p, unsigned char* tables, int32_t k0, int32_t steps) {
  constexpr int kTiles = kChunk / 64, kPieces = kRows / 4;  // (steps here) 16-byte pieces (4 outputs) per step
  const int32_t N = p.w.n, n0 = blockIdx.x * kRows;
  for (int i = threadIdx.x; i < 2 * kTiles * kPieces; i += kThreads) {
    const int table = i / (kTiles * kPieces), at = i % (kTiles * kPieces);
    const int tile = at / kPieces, piece = at % kPieces;
    const int32_t n = n0 + piece * 4;
    const bool valid = n < N && tile < steps;
    const size_t src = valid ? static_cast<size_t>((k0 + tile * 64) / p.w.group_size) * N + n : 0;
    const void* from = table == 0 ? static_cast<const void*>(p.w.scales + src) : static_cast<const void*>(p.w.zeros + src);
    cp_async16(smem_u32(tables + (static_cast<size_t>(table) * kTiles * kRows + tile * kRows + piece * 4) * 4), from,
               valid ? 16u : 0u);
  }
}

template <int MF, int kChunk>
__device__ __forceinline__ void stage_chunk(const Params& p, unsigned char* buffer, int32_t k0, int32_t steps) {
  stage_x<MF, kChunk>(p, reinterpret_cast<__nv_bfloat16*>(buffer), k0, steps);
  stage_scales<kChunk>(p, buffer + x_bytes<MF, kChunk>(), k0, steps);
  cp_async_commit();
}

template <int MF, int kChunk>
__global__ void __launch_bounds__(kThreads) w4_gemm_kernel(Params p) {
  constexpr int kStepsPerChunk = kChunk / 64, kSets = 2, kBuffer = buffer_bytes<MF, kChunk>();
  extern __shared__ __align__(16) unsigned char smem_raw[];

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
  const int32_t n_r = (active ? ntile : 0) * 16 + r;

  const uint4* wp = p.w.words + (static_cast<size_t>(active ? ntile : 0) * ksteps + step0) * 32 + lane;
  uint4 cur[kStepsPerChunk], nxt[kStepsPerChunk];
#pragma unroll
  for (int s = 0; s < kStepsPerChunk; ++s)
    cur[s] = (active && s < steps) ? load_words(wp + s * 32) : make_uint4(0, 0, 0, 0);

  float total[MF][4];
#pragma unroll
  for (int j = 0; j < MF; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) total[j][e] = 0.f;

  wait_for_previous_kernel();  // x (and the residual) come from the kernels before
  if (chunks > 0) stage_chunk<MF, kChunk>(p, smem_raw, step0 * 64, min(steps, kStepsPerChunk));

  // ldmatrix addresses: lane i gives row i % 8 of matrix i / 8; matrices (tile lo, tile hi, next
  // tile lo, next tile hi) of fragment j.
  const int mi = lane / 8, mr = lane % 8;
  const uint32_t lane_off = static_cast<uint32_t>((mr * (kChunk + kRowPad) + (mi & 1) * 8 + (mi >> 1) * 16) * 2);
  const int srow = warp * 16 + r;  // the lane's first output among the block's 64

  for (int32_t c = 0; c < chunks; ++c) {
    const int32_t cstep = step0 + c * kStepsPerChunk;
    const int32_t csteps = min(kStepsPerChunk, steps - c * kStepsPerChunk);
    if (c + 1 < chunks) {
      const int32_t nsteps = min(kStepsPerChunk, steps - (c + 1) * kStepsPerChunk);
      stage_chunk<MF, kChunk>(p, smem_raw + ((c + 1) & 1) * kBuffer, (cstep + kStepsPerChunk) * 64, nsteps);
#pragma unroll
      for (int s = 0; s < kStepsPerChunk; ++s)
        nxt[s] = (active && s < nsteps) ? load_words(wp + ((c + 1) * kStepsPerChunk + s) * 32)
                                        : make_uint4(0, 0, 0, 0);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    unsigned char* buffer = smem_raw + (c & 1) * kBuffer;
    const uint32_t base = smem_u32(buffer) + lane_off;
    const float* scales = reinterpret_cast<const float*>(buffer + x_bytes<MF, kChunk>()) + srow;
    const uint32_t* zeros = reinterpret_cast<const uint32_t*>(scales + kStepsPerChunk * kRows);
    if (active) {
#pragma unroll
      for (int s = 0; s < kStepsPerChunk; ++s) {
        // Steps past the chunk's end have zero words, zeros and scales: they add 0.
        const uint32_t words[4] = {cur[s].x, cur[s].y, cur[s].z, cur[s].w};
        const uint32_t zr = zeros[s * kRows], zr8 = zeros[s * kRows + 8];
        float acc[kSets][MF][4];
#pragma unroll
        for (int a = 0; a < kSets; ++a)
#pragma unroll
          for (int j = 0; j < MF; ++j) acc[a][j][0] = acc[a][j][1] = acc[a][j][2] = acc[a][j][3] = 0.f;
#pragma unroll
        for (int pair = 0; pair < 2; ++pair) {
          uint32_t b[MF][4];
#pragma unroll
          for (int j = 0; j < MF; ++j)
            ldmatrix_x4(base + static_cast<uint32_t>((j * 8 * (kChunk + kRowPad) + s * 64 + pair * 32) * 2), b[j][0],
                        b[j][1], b[j][2], b[j][3]);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            uint32_t a[4];
            w4_dequantize_fragment(words[pair * 2 + h], zr, zr8, a);
#pragma unroll
            for (int j = 0; j < MF; ++j) mma_bf16(acc[h][j], a, b[j][2 * h], b[j][2 * h + 1]);
          }
        }
        const float sr = scales[s * kRows], sr8 = scales[s * kRows + 8];
#pragma unroll
        for (int j = 0; j < MF; ++j) {
          total[j][0] = fmaf(acc[0][j][0] + acc[1][j][0], sr, total[j][0]);
          total[j][1] = fmaf(acc[0][j][1] + acc[1][j][1], sr, total[j][1]);
          total[j][2] = fmaf(acc[0][j][2] + acc[1][j][2], sr8, total[j][2]);
          total[j][3] = fmaf(acc[0][j][3] + acc[1][j][3], sr8, total[j][3]);
        }
      }
    }
    __syncthreads();  // the buffer is staged again two chunks on
#pragma unroll
    for (int s = 0; s < kStepsPerChunk; ++s) cur[s] = nxt[s];
  }
  allow_next_kernel();

  if (p.splits > 1 && !sum_splits<MF>(total, p.partials, p.counters, p.splits, ntiles, ntile, active)) return;
  if (!active) return;
  const int t = lane % 4;
  for_each_output<MF>(total, p.m, n_r, t, [&](int32_t m, int32_t n, float v) {
    const size_t at = static_cast<size_t>(m) * N + n;
    if (p.output == W4Output::kBf16) p.y[at] = __float2bfloat16(v);
    else p.residual[at] += v;
  });
}

}  // namespace zinfer::gpu::cuda::w4_detail
