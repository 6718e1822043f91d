// Device helpers shared by the attention kernels (.cu only).
#pragma once

#include <cstdint>

namespace zinfer::gpu::cuda {

// Physical cache row of logical key `key` through a block table. Block sizes are powers of two in
// practice, where a shift replaces the (slow, per key) integer division.
// paged_slot in two steps, for a kernel that reads the block-table entry ahead of its use: the
// entry's index for `key`, then the slot from the entry.
__device__ __forceinline__ int paged_entry_index(int key, int block_size) {
  if ((block_size & (block_size - 1)) == 0) return key >> (__ffs(block_size) - 1);
  return key / block_size;
}
__device__ __forceinline__ int64_t paged_slot_from(int32_t entry, int key, int block_size) {
  if ((block_size & (block_size - 1)) == 0)
    return (static_cast<int64_t>(entry) << (__ffs(block_size) - 1)) + (key & (block_size - 1));
  return static_cast<int64_t>(entry) * block_size + key % block_size;
}

__device__ __forceinline__ int64_t paged_slot(const int32_t* block_table, int key, int block_size) {
  return paged_slot_from(block_table[paged_entry_index(key, block_size)], key, block_size);
}

// 2^x in one instruction (MUFU.EX2); -inf gives 0. Scores are already in log2 units.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace zinfer::gpu::cuda
