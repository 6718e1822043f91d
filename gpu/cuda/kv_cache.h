// The paged KV cache on the device and its pinned host (swap) pool.
// Device layout: [layer][k|v][num_blocks][block_size][num_kv_heads][head_dim] bf16, so one layer's K
// (or V) is the [num_blocks, block_size, num_kv_heads, head_dim] array the kernels take. The host pool
// has the same layout with its own block count. A block's bytes are 2 * layers equal runs, one per
// (layer, k|v), so a swap or a copy-on-write of one block is one strided 2D copy.
#pragma once

#include <cuda_bf16.h>
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
  size_t block_bytes() const {  // one (layer, k|v) run of one block
    return static_cast<size_t>(block_size) * num_kv_heads * head_dim * sizeof(__nv_bfloat16);
  }
  size_t bytes_per_block_all_layers() const { return block_bytes() * 2 * num_layers; }
};

class KvCache {
 public:
  // device_blocks includes nothing extra; one scratch block (id = device_blocks) is added for
  // padding tokens.
  KvCache(const KvGeometry& geometry, int32_t device_blocks, int32_t host_blocks);
  const KvGeometry& geometry() const { return geo_; }
  int32_t device_blocks() const { return device_blocks_; }
  int32_t host_blocks() const { return host_blocks_; }
  int32_t scratch_block() const { return device_blocks_; }
  __nv_bfloat16* k(int32_t layer) const { return layer_ptr(layer, 0); }
  __nv_bfloat16* v(int32_t layer) const { return layer_ptr(layer, 1); }

  // Block copies, enqueued on stream; ids are checked (the message names the bad pair).
  void swap_out(const std::vector<std::pair<int32_t, int32_t>>& device_to_host, cudaStream_t stream);
  void swap_in(const std::vector<std::pair<int32_t, int32_t>>& host_to_device, cudaStream_t stream);
  void copy(const std::vector<std::pair<int32_t, int32_t>>& device_src_dst, cudaStream_t stream);

  // For tests: the host pool's bytes of one (layer, k|v, block).
  const __nv_bfloat16* host_block(int32_t layer, int32_t kv, int32_t block) const;

 private:
  __nv_bfloat16* layer_ptr(int32_t layer, int32_t kv) const;
  void check_ids(const char* what, int32_t a, int32_t a_limit, int32_t b, int32_t b_limit) const;

  KvGeometry geo_;
  int32_t device_blocks_ = 0;   // usable blocks (the scratch block comes after them)
  int32_t host_blocks_ = 0;
  DeviceBuffer device_;
  PinnedBuffer host_;
};

}  // namespace zinfer::gpu::cuda
