// More than 48 KB of dynamic shared memory per block needs an opt-in (cudaFuncSetAttribute), and
// the attribute is a device's: a process that drives several GPUs (tensor parallelism) must set it
// on each. A kernel keeps its own record of the devices done (`opted_in`, devices < 64; beyond,
// the attribute is set on every launch), so a launch on a device already done costs one
// cudaGetDevice.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "gpu/cuda/resident_blocks.h"

namespace zinfer::gpu::cuda {

// bytes(int* out) gives the opt-in size; it runs only on a device not yet done.
template <typename Kernel, typename Bytes>
cudaError_t opt_in_shared_memory(Kernel kernel, std::atomic<uint64_t>& opted_in, Bytes bytes) {
  int device = 0;
  cudaError_t s = cudaGetDevice(&device);
  if (s != cudaSuccess) return s;
  const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
  if (bit != 0 && (opted_in.load(std::memory_order_relaxed) & bit) != 0) return cudaSuccess;
  int size = 0;
  s = bytes(&size);
  if (s != cudaSuccess) return s;
  s = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, size);
  if (s == cudaSuccess) opted_in.fetch_or(bit, std::memory_order_relaxed);
  return s;
}

// Lets the kernel take up to the opt-in maximum of dynamic shared memory (less its static arrays),
// once per device; `opted_in` is the kernel's own record.
template <typename Kernel>
cudaError_t allow_large_shared_memory(Kernel kernel, std::atomic<uint64_t>& opted_in) {
  return opt_in_shared_memory(kernel, opted_in, [kernel](int* bytes) {
    cudaFuncAttributes attrs{};
    const cudaError_t s = cudaFuncGetAttributes(&attrs, kernel);
    *bytes = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) - static_cast<int>(attrs.sharedSizeBytes);
    return s;
  });
}

}  // namespace zinfer::gpu::cuda
