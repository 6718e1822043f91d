// The paged KV cache on the device and its pinned host (swap) pool.
// Device layout: [layer][k|v][num_blocks][block_size][num_kv_heads][head_dim] elements, bf16, or
// with kv_cache_dtype fp8 e4m3fn codes (1 byte) beside one float scale per layer for K and one for V
// (the cache holds e4m3(x / scale); gpu/quant/kv_scales.h). So one layer's K (or V) is the
// [num_blocks, block_size, num_kv_heads, head_dim] array the kernels take. The host pool
// has the same layout with its own block count. A block's bytes are 2 * layers equal runs, one per
// (layer, k|v), so a swap or a copy-on-write of one block is one strided 2D copy.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "gpu/cuda/device_memory.h"

namespace zinfer::gpu::cuda {

struct KvGeometry {
  int32_t num_layers = 0;
  int32_t block_size = 16;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t element_bytes = 2;  // 2: bf16; 1: fp8 (e4m3fn)
  size_t block_bytes() const {  // one (layer, k|v) run of one block
    return static_cast<size_t>(block_size) * num_kv_heads * head_dim * element_bytes;
  }
  size_t bytes_per_block_all_layers() const { return block_bytes() * 2 * num_layers; }
};

class KvCache {
 public:
  // device_blocks includes nothing extra; one scratch block (id = device_blocks) is added for
  // padding tokens. An fp8 cache (geometry.element_bytes 1) takes one K and one V scale per layer.
  KvCache(const KvGeometry& geometry, int32_t device_blocks, int32_t host_blocks, std::vector<float> k_scales = {},
          std::vector<float> v_scales = {});
  const KvGeometry& geometry() const { return geo_; }
  int32_t device_blocks() const { return device_blocks_; }
  int32_t host_blocks() const { return host_blocks_; }
  int32_t scratch_block() const { return device_blocks_; }
  bool fp8() const { return geo_.element_bytes == 1; }
  // A bf16 cache's layers (null in an fp8 cache) and an fp8 cache's (null in a bf16 one).
  __nv_bfloat16* k(int32_t layer) const { return fp8() ? nullptr : static_cast<__nv_bfloat16*>(layer_ptr(layer, 0)); }
  __nv_bfloat16* v(int32_t layer) const { return fp8() ? nullptr : static_cast<__nv_bfloat16*>(layer_ptr(layer, 1)); }
  __nv_fp8_e4m3* k8(int32_t layer) const { return fp8() ? static_cast<__nv_fp8_e4m3*>(layer_ptr(layer, 0)) : nullptr; }
  __nv_fp8_e4m3* v8(int32_t layer) const { return fp8() ? static_cast<__nv_fp8_e4m3*>(layer_ptr(layer, 1)) : nullptr; }
  float k_scale(int32_t layer) const { return fp8() ? k_scales_[static_cast<size_t>(layer)] : 1.0f; }
  float v_scale(int32_t layer) const { return fp8() ? v_scales_[static_cast<size_t>(layer)] : 1.0f; }

  // Block copies, enqueued on stream; ids are checked (the message names the bad pair).
  void swap_out(const std::vector<std::pair<int32_t, int32_t>>& device_to_host, cudaStream_t stream);
  void swap_in(const std::vector<std::pair<int32_t, int32_t>>& host_to_device, cudaStream_t stream);
  void copy(const std::vector<std::pair<int32_t, int32_t>>& device_src_dst, cudaStream_t stream);

  // For tests: the host pool's bytes of one (layer, k|v, block) (block_bytes() of them).
  const std::byte* host_block(int32_t layer, int32_t kv, int32_t block) const;

 private:
  void* layer_ptr(int32_t layer, int32_t kv) const;
  void check_ids(const char* what, int32_t a, int32_t a_limit, int32_t b, int32_t b_limit) const;

  KvGeometry geo_;
  int32_t device_blocks_ = 0;   // usable blocks (the scratch block comes after them)
  int32_t host_blocks_ = 0;
  std::vector<float> k_scales_, v_scales_;  // fp8: [num_layers]
  DeviceBuffer device_;
  PinnedBuffer host_;
};

}  // namespace zinfer::gpu::cuda
