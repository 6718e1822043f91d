// The split-K finish shared by the skinny tensor-core kernels (the W4A16 and FP8 ones): blocks
// that own the same outputs and different input ranges (blockIdx.y = split) each write their
// float32 partial sums, and the block that finishes last adds them in split order, so the result
// does not depend on which block ran first. Each warp owns 16 outputs (ntile) and each lane MF·4
// values of them (the mma C fragments of MF 8-row pieces of x).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

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
