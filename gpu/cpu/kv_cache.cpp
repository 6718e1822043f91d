#include "gpu/cpu/kv_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zinfer::gpu::cpu {

KvCache::KvCache(int64_t num_layers, int64_t num_blocks, int64_t num_host_blocks, int64_t block_size,
                 int64_t num_kv_heads, int64_t head_dim)
    : num_layers_(num_layers),
      num_blocks_(num_blocks),
      num_host_blocks_(num_host_blocks),
      block_size_(block_size),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      block_floats_(block_size * num_kv_heads * head_dim),
      device_(std::make_unique_for_overwrite<float[]>(static_cast<size_t>(num_layers * 2 * num_blocks * block_floats_))),
      host_(std::make_unique_for_overwrite<float[]>(
          static_cast<size_t>(num_layers * 2 * std::max<int64_t>(num_host_blocks, 0) * block_floats_))) {
  if (num_blocks <= 0) throw std::invalid_argument("KV cache needs at least one block");
}

int64_t KvCache::bytes_per_block(int64_t num_layers, int64_t block_size, int64_t num_kv_heads, int64_t head_dim) {
  return num_layers * 2 * block_size * num_kv_heads * head_dim * static_cast<int64_t>(sizeof(float));
}

PagedKvLayer KvCache::layer(int64_t l) {
  PagedKvLayer out;
  out.k = device_.get() + (l * 2 + 0) * num_blocks_ * block_floats_;
  out.v = device_.get() + (l * 2 + 1) * num_blocks_ * block_floats_;
  out.num_blocks = num_blocks_;
  out.block_size = block_size_;
  out.num_kv_heads = num_kv_heads_;
  out.head_dim = head_dim_;
  return out;
}

float* KvCache::block(float* pool, int64_t pool_blocks, int64_t layer, int64_t kv, int64_t b) {
  return pool + ((layer * 2 + kv) * pool_blocks + b) * block_floats_;
}

void KvCache::check(int64_t b, int64_t limit, const char* what) const {
  if (b < 0 || b >= limit)
    throw std::out_of_range(std::string(what) + " block " + std::to_string(b) + " outside [0, " +
                            std::to_string(limit) + ")");
}

void KvCache::copy_block(float* from_pool, int64_t from_count, int64_t from_block, float* to_pool,
                         int64_t to_count, int64_t to_block) {
  for (int64_t l = 0; l < num_layers_; ++l)
    for (int64_t kv = 0; kv < 2; ++kv) {
      const float* src = block(from_pool, from_count, l, kv, from_block);
      std::copy(src, src + block_floats_, block(to_pool, to_count, l, kv, to_block));
    }
}

void KvCache::swap_out(int64_t device_block, int64_t host_block) {
  check(device_block, num_blocks_, "swap_out: device");
  check(host_block, num_host_blocks_, "swap_out: host");
  copy_block(device_.get(), num_blocks_, device_block, host_.get(), num_host_blocks_, host_block);
}

void KvCache::swap_in(int64_t host_block, int64_t device_block) {
  check(host_block, num_host_blocks_, "swap_in: host");
  check(device_block, num_blocks_, "swap_in: device");
  copy_block(host_.get(), num_host_blocks_, host_block, device_.get(), num_blocks_, device_block);
}

void KvCache::copy(int64_t src_block, int64_t dst_block) {
  check(src_block, num_blocks_, "copy: source");
  check(dst_block, num_blocks_, "copy: destination");
  copy_block(device_.get(), num_blocks_, src_block, device_.get(), num_blocks_, dst_block);
}

}  // namespace zinfer::gpu::cpu
