// The CPU backend's KV cache: a device pool (the cache attention reads) and a host pool (where
// swapped-out blocks wait), both holding, per layer, K and V as
// [num_blocks, block_size, num_kv_heads, head_dim] float32 (the layout the CUDA backend uses).
#pragma once

#include <cstdint>
#include <memory>

#include "gpu/cpu/ops.h"

namespace zinfer::gpu::cpu {

class KvCache {
 public:
  KvCache(int64_t num_layers, int64_t num_blocks, int64_t num_host_blocks, int64_t block_size,
          int64_t num_kv_heads, int64_t head_dim);

  PagedKvLayer layer(int64_t l);
  int64_t num_blocks() const { return num_blocks_; }
  int64_t num_host_blocks() const { return num_host_blocks_; }
  int64_t block_size() const { return block_size_; }

  // Whole-block copies over all layers, K and V; block ids are range-checked (std::out_of_range).
  void swap_out(int64_t device_block, int64_t host_block);
  void swap_in(int64_t host_block, int64_t device_block);
  void copy(int64_t src_block, int64_t dst_block);

  // Bytes one block takes over all layers (K and V).
  static int64_t bytes_per_block(int64_t num_layers, int64_t block_size, int64_t num_kv_heads, int64_t head_dim);

 private:
  float* block(float* pool, int64_t pool_blocks, int64_t layer, int64_t kv, int64_t b);
  // Copies one block's K and V of every layer between two pools (or within one).
  void copy_block(float* from_pool, int64_t from_count, int64_t from_block, float* to_pool, int64_t to_count,
                  int64_t to_block);
  void check(int64_t b, int64_t limit, const char* what) const;

  int64_t num_layers_, num_blocks_, num_host_blocks_, block_size_, num_kv_heads_, head_dim_;
  int64_t block_floats_;  // block_size * num_kv_heads * head_dim
  // Left uninitialised: large pools are mapped lazily, so only the blocks in use take memory.
  std::unique_ptr<float[]> device_;  // [layer][K|V][num_blocks][block_floats]
  std::unique_ptr<float[]> host_;    // [layer][K|V][num_host_blocks][block_floats]
};

}  // namespace zinfer::gpu::cpu
