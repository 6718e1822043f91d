// What the skinny tensor-core kernels (W4A16, w4/; FP8 W8A8, fp8/) share: the m16n8k16 mma with
// the weights as the A operand, the number of 8-row x fragments an instantiation holds, the SM
// count their one-wave grids are sized by, and the split-K finish: blocks that own the same
// outputs and different input ranges (blockIdx.y = split) each write their float32 partial sums,
// and the block that finishes last adds them in split order, so the result does not depend on
// which block ran first. Each warp owns 16 outputs (ntile) and each lane MF·4 values of them (the
// mma C fragments of MF 8-row pieces of x).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace zinfer::gpu::cuda {

// c += a · b, bf16 or f16 inputs, float32 accumulation.
__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_f16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four 8 × 8 bf16 matrices from shared memory (lane i gives row i % 8 of matrix i / 8): the B
// fragments of x the kernels stage there.
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// out(m, n, value) for each of a lane's MF · 4 C-fragment values whose row of x m is below rows:
// fragment j holds rows of x 8j + 2t and 8j + 2t + 1 (t = lane % 4) of outputs n_r and n_r + 8
// (n_r = ntile · 16 + lane / 4).
template <int MF, typename Out>
__device__ __forceinline__ void for_each_output(const float (&total)[MF][4], int32_t rows, int32_t n_r, int t, Out out) {
#pragma unroll
  for (int j = 0; j < MF; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int32_t m = j * 8 + 2 * t + (e & 1);
      if (m < rows) out(m, n_r + (e >> 1) * 8, total[j][e]);
    }
}

// 8-row x fragments of the instantiation that takes m rows (1, 2, 4 or 8: up to 64 rows).
inline int32_t mma_fragments(int32_t m) { return m <= 8 ? 1 : m <= 16 ? 2 : m <= 32 ? 4 : 8; }

// SMs of the current device (132 if it cannot be asked), for one-wave grids.
inline int multiprocessor_count() {
  static const int count = [] {
    int device = 0, n = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
      return 132;
    return n;
  }();
  return count;
}

// Blocks of kWarps warps (16 outputs each) over n outputs.
inline int32_t output_blocks(int32_t n, int32_t warps) { return (n / 16 + warps - 1) / warps; }

// Splits of `steps` input steps for one wave: as many as the SMs hold blocks (`resident` per SM)
// beside the outputs' `blocks`, so that no block waits for a second wave and HBM sees every SM
// streaming; rounded so that every split but the last has the same number of steps.
inline int32_t one_wave_splits(int32_t blocks, int32_t steps, int resident) {
  const int32_t capacity = resident * multiprocessor_count();
  const int32_t splits = std::clamp(capacity / std::max(blocks, 1), 1, std::max(steps, 1));
  const int32_t per = (steps + splits - 1) / splits;
  return (steps + per - 1) / per;
}

// Floats of the partial sums a launch of m rows over n outputs in `splits` splits writes.
inline size_t split_partial_floats(int32_t m, int32_t n, int32_t splits) {
  return splits > 1 ? static_cast<size_t>(splits) * (n / 16) * mma_fragments(m) * 4 * 32 : 0;
}

// Partials [split][ntile][MF·4][32 lanes]: each lane writes and reads back its own values.
// Returns false in a block that is not the last of its outputs' splits (it has nothing left to
// do); in the last one, total holds the sum over all splits. counters[blockIdx.x] is back at 0
// afterwards (ready for the next launch and for graph replay).
template <int MF>
__device__ __forceinline__ bool sum_splits(float (&total)[MF][4], float* partials, uint32_t* counters,
                                           int32_t splits, int32_t ntiles, int32_t ntile, bool active) {
  __shared__ uint32_t last_block;
  const int lane = threadIdx.x % 32;
  const size_t tile_floats = static_cast<size_t>(MF) * 4 * 32;
  if (active) {
    float* mine = partials + (static_cast<size_t>(blockIdx.y) * ntiles + ntile) * tile_floats + lane;
#pragma unroll
    for (int j = 0; j < MF; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) mine[(j * 4 + e) * 32] = total[j][e];
  }
  // The block's partials, then one release: the barrier orders every thread's writes before
  // thread 0's fence, whose cumulativity carries them to the block that counts last.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const uint32_t done = atomicAdd(counters + blockIdx.x, 1u);
    last_block = done == static_cast<uint32_t>(splits - 1);
    if (last_block) counters[blockIdx.x] = 0;
  }
  __syncthreads();
  if (!last_block) return false;
  __threadfence();
  if (active) {
#pragma unroll
    for (int j = 0; j < MF; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) total[j][e] = 0.f;
    for (int32_t s = 0; s < splits; ++s) {  // split order: the sum does not depend on timing
      const float* part = partials + (static_cast<size_t>(s) * ntiles + ntile) * tile_floats + lane;
#pragma unroll
      for (int j = 0; j < MF; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) total[j][e] += __ldcg(part + (j * 4 + e) * 32);
    }
  }
  return true;
}

}  // namespace zinfer::gpu::cuda
