#include "gpu/cpu/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace zinfer::gpu::cpu {

KvCache::KvCache(int64_t num_layers, int64_t num_blocks, int64_t num_host_blocks, int64_t block_size,
                 int64_t num_kv_heads, int64_t head_dim, bool fp8, std::vector<float> k_scales,
                 std::vector<float> v_scales)
    : num_layers_(num_layers),
      num_blocks_(num_blocks),
      num_host_blocks_(num_host_blocks),
      block_size_(block_size),
      num_kv_heads_(num_kv_heads),
      head_dim_(head_dim),
      fp8_(fp8),
      block_bytes_(block_size * num_kv_heads * head_dim * (fp8 ? 1 : static_cast<int64_t>(sizeof(float)))),
      k_scales_(std::move(k_scales)),
      v_scales_(std::move(v_scales)),
      device_(std::make_unique_for_overwrite<std::byte[]>(static_cast<size_t>(num_layers * 2 * num_blocks * block_bytes_))),
      host_(std::make_unique_for_overwrite<std::byte[]>(
          static_cast<size_t>(num_layers * 2 * std::max<int64_t>(num_host_blocks, 0) * block_bytes_))) {
  if (num_blocks <= 0) throw std::invalid_argument("KV cache needs at least one block");
  if (fp8_ && (static_cast<int64_t>(k_scales_.size()) != num_layers || static_cast<int64_t>(v_scales_.size()) != num_layers))
    throw std::invalid_argument("fp8 KV cache of " + std::to_string(num_layers) + " layers given " +
                                std::to_string(k_scales_.size()) + " k and " + std::to_string(v_scales_.size()) +
                                " v scales");
}

int64_t KvCache::bytes_per_block(int64_t num_layers, int64_t block_size, int64_t num_kv_heads, int64_t head_dim,
                                 int64_t element_bytes) {
  return num_layers * 2 * block_size * num_kv_heads * head_dim * element_bytes;
}

PagedKvLayer KvCache::layer(int64_t l) {
  PagedKvLayer out;
  std::byte* k = device_.get() + (l * 2 + 0) * num_blocks_ * block_bytes_;
  std::byte* v = device_.get() + (l * 2 + 1) * num_blocks_ * block_bytes_;
  if (fp8_) {
    out.k8 = reinterpret_cast<uint8_t*>(k);
    out.v8 = reinterpret_cast<uint8_t*>(v);
    out.k_scale = k_scales_[static_cast<size_t>(l)];
    out.v_scale = v_scales_[static_cast<size_t>(l)];
  } else {
    out.k = reinterpret_cast<float*>(k);
    out.v = reinterpret_cast<float*>(v);
  }
  out.num_blocks = num_blocks_;
  out.block_size = block_size_;
  out.num_kv_heads = num_kv_heads_;
  out.head_dim = head_dim_;
  return out;
}

std::byte* KvCache::block(std::byte* pool, int64_t pool_blocks, int64_t layer, int64_t kv, int64_t b) {
  return pool + ((layer * 2 + kv) * pool_blocks + b) * block_bytes_;
}

void KvCache::check(int64_t b, int64_t limit, const char* what) const {
  if (b < 0 || b >= limit)
    throw std::out_of_range(std::string(what) + " block " + std::to_string(b) + " outside [0, " +
                            std::to_string(limit) + ")");
}

void KvCache::copy_block(std::byte* from_pool, int64_t from_count, int64_t from_block, std::byte* to_pool,
                         int64_t to_count, int64_t to_block) {
  for (int64_t l = 0; l < num_layers_; ++l)
    for (int64_t kv = 0; kv < 2; ++kv)
      std::memcpy(block(to_pool, to_count, l, kv, to_block), block(from_pool, from_count, l, kv, from_block),
                  static_cast<size_t>(block_bytes_));
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
  if (src_block == dst_block) return;  // memcpy onto itself is undefined
  copy_block(device_.get(), num_blocks_, src_block, device_.get(), num_blocks_, dst_block);
}

}  // namespace zinfer::gpu::cpu
