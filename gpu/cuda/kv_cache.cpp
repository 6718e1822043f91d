#include "gpu/cuda/kv_cache.h"

#include <stdexcept>
#include <string>

#include "gpu/cuda/cuda_check.h"

namespace zinfer::gpu::cuda {

namespace {

const KvGeometry& checked(const KvGeometry& g, size_t k_scales, size_t v_scales) {
  if (g.element_bytes != 1 && g.element_bytes != 2)
    throw std::invalid_argument("KV cache element of " + std::to_string(g.element_bytes) + " bytes (1: fp8, 2: bf16)");
  const size_t want = g.element_bytes == 1 ? static_cast<size_t>(g.num_layers) : 0;
  if (g.element_bytes == 1 && (k_scales != want || v_scales != want))
    throw std::invalid_argument("fp8 KV cache of " + std::to_string(g.num_layers) + " layers given " +
                                std::to_string(k_scales) + " k and " + std::to_string(v_scales) + " v scales");
  return g;
}

}  // namespace

KvCache::KvCache(const KvGeometry& g, int32_t device_blocks, int32_t host_blocks, std::vector<float> k_scales,
                 std::vector<float> v_scales)
    : geo_(checked(g, k_scales.size(), v_scales.size())),
      device_blocks_(device_blocks),
      host_blocks_(host_blocks),
      k_scales_(std::move(k_scales)),
      v_scales_(std::move(v_scales)),
      device_(g.bytes_per_block_all_layers() * static_cast<size_t>(device_blocks + 1), "KV cache"),
      host_(g.bytes_per_block_all_layers() * static_cast<size_t>(host_blocks), "KV swap pool") {}

void* KvCache::layer_ptr(int32_t layer, int32_t kv) const {
  const size_t run = static_cast<size_t>(device_blocks_ + 1) * geo_.block_bytes();
  return device_.as<std::byte>() + (static_cast<size_t>(layer) * 2 + kv) * run;
}

const std::byte* KvCache::host_block(int32_t layer, int32_t kv, int32_t block) const {
  const size_t run = static_cast<size_t>(host_blocks_) * geo_.block_bytes();
  return host_.as<std::byte>() + (static_cast<size_t>(layer) * 2 + kv) * run + static_cast<size_t>(block) * geo_.block_bytes();
}

void KvCache::check_ids(const char* what, int32_t a, int32_t a_limit, int32_t b, int32_t b_limit) const {
  if (a < 0 || a >= a_limit || b < 0 || b >= b_limit) {
    throw std::invalid_argument(std::string(what) + " (" + std::to_string(a) + ", " + std::to_string(b) +
                                ") names a block outside the pools (" + std::to_string(device_blocks_) + " device, " +
                                std::to_string(host_blocks_) + " host blocks)");
  }
}

void KvCache::swap_out(const std::vector<std::pair<int32_t, int32_t>>& pairs, cudaStream_t stream) {
  const size_t bb = geo_.block_bytes();
  const size_t dpitch = static_cast<size_t>(host_blocks_) * bb, spitch = static_cast<size_t>(device_blocks_ + 1) * bb;
  for (auto [dev, host] : pairs) {
    check_ids("swap_out pair", dev, device_blocks_, host, host_blocks_);
    check_cuda(cudaMemcpy2DAsync(host_.as<std::byte>() + host * bb, dpitch, device_.as<std::byte>() + dev * bb, spitch,
                                 bb, 2 * geo_.num_layers, cudaMemcpyDeviceToHost, stream),
               "swap-out copy");
  }
}

void KvCache::swap_in(const std::vector<std::pair<int32_t, int32_t>>& pairs, cudaStream_t stream) {
  const size_t bb = geo_.block_bytes();
  const size_t spitch = static_cast<size_t>(host_blocks_) * bb, dpitch = static_cast<size_t>(device_blocks_ + 1) * bb;
  for (auto [host, dev] : pairs) {
    check_ids("swap_in pair", host, host_blocks_, dev, device_blocks_);
    check_cuda(cudaMemcpy2DAsync(device_.as<std::byte>() + dev * bb, dpitch, host_.as<std::byte>() + host * bb, spitch,
                                 bb, 2 * geo_.num_layers, cudaMemcpyHostToDevice, stream),
               "swap-in copy");
  }
}

void KvCache::copy(const std::vector<std::pair<int32_t, int32_t>>& pairs, cudaStream_t stream) {
  const size_t bb = geo_.block_bytes();
  const size_t pitch = static_cast<size_t>(device_blocks_ + 1) * bb;
  for (auto [src, dst] : pairs) {
    check_ids("copy pair", src, device_blocks_, dst, device_blocks_);
    check_cuda(cudaMemcpy2DAsync(device_.as<std::byte>() + dst * bb, pitch, device_.as<std::byte>() + src * bb, pitch,
                                 bb, 2 * geo_.num_layers, cudaMemcpyDeviceToDevice, stream),
               "copy-on-write copy");
  }
}

}  // namespace zinfer::gpu::cuda
