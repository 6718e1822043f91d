// The CPU backend's KV cache: a device pool (the cache attention reads) and a host pool (where
// swapped-out blocks wait), both holding, per layer, K and V as
// [num_blocks, block_size, num_kv_heads, head_dim] elements (the layout the CUDA backend uses):
// float32, or with kv_cache_dtype fp8 one e4m3fn code (uint8) each, beside a float scale per layer
// for K and one for V (gpu/quant/kv_scales.h). A pool is [layer][K|V][block][element] bytes, so a
// block moves between pools as bytes whatever it holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/cpu/ops.h"

namespace zinfer::gpu::cpu {

class KvCache {
 public:
  // fp8: store e4m3fn codes with k_scales[l] / v_scales[l] (one per layer); else float32 (the
  // scale vectors are then unused and may be empty).
  KvCache(int64_t num_layers, int64_t num_blocks, int64_t num_host_blocks, int64_t block_size,
          int64_t num_kv_heads, int64_t head_dim, bool fp8 = false, std::vector<float> k_scales = {},
          std::vector<float> v_scales = {});

  PagedKvLayer layer(int64_t l);
  int64_t num_blocks() const { return num_blocks_; }
  int64_t num_host_blocks() const { return num_host_blocks_; }
  int64_t block_size() const { return block_size_; }
  bool fp8() const { return fp8_; }

  // Whole-block copies over all layers, K and V; block ids are range-checked (std::out_of_range).
  void swap_out(int64_t device_block, int64_t host_block);
  void swap_in(int64_t host_block, int64_t device_block);
  void copy(int64_t src_block, int64_t dst_block);

  // Bytes one block takes over all layers (K and V), elements of `element_bytes` (4: float32, 1: fp8).
  static int64_t bytes_per_block(int64_t num_layers, int64_t block_size, int64_t num_kv_heads, int64_t head_dim,
                                 int64_t element_bytes = sizeof(float));

 private:
  std::byte* block(std::byte* pool, int64_t pool_blocks, int64_t layer, int64_t kv, int64_t b);
  // Copies one block's K and V of every layer between two pools (or within one).
  void copy_block(std::byte* from_pool, int64_t from_count, int64_t from_block, std::byte* to_pool, int64_t to_count,
                  int64_t to_block);
  void check(int64_t b, int64_t limit, const char* what) const;

  int64_t num_layers_, num_blocks_, num_host_blocks_, block_size_, num_kv_heads_, head_dim_;
  bool fp8_;
  int64_t block_bytes_;  // block_size * num_kv_heads * head_dim * element bytes
  std::vector<float> k_scales_, v_scales_;
  // Left uninitialised: large pools are mapped lazily, so only the blocks in use take memory.
  std::unique_ptr<std::byte[]> device_;  // [layer][K|V][num_blocks][block_bytes]
  std::unique_ptr<std::byte[]> host_;    // [layer][K|V][num_host_blocks][block_bytes]
};

}  // namespace zinfer::gpu::cpu
