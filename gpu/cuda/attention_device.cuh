// Device helpers shared by the attention kernels (.cu only).
#pragma once

#include <cstdint>

namespace zinfer::gpu::cuda {

// Physical cache row of logical key `key` through a block table. Block sizes are powers of two in
// practice, where a shift replaces the (slow, per key) integer division.
__device__ __forceinline__ int64_t paged_slot(const int32_t* block_table, int key, int block_size) {
  if ((block_size & (block_size - 1)) == 0) {
    const int shift = __ffs(block_size) - 1;
    return (static_cast<int64_t>(block_table[key >> shift]) << shift) + (key & (block_size - 1));
  }
  return static_cast<int64_t>(block_table[key / block_size]) * block_size + key % block_size;
}

// 2^x in one instruction (MUFU.EX2); -inf gives 0. Scores are already in log2 units.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace zinfer::gpu::cuda
