// What the GPU holds: an attribute of the current device, and how many blocks of a kernel it holds
// at once (the grid of the kernels whose blocks walk their work a grid apart: fp8_quantize.cu's row
// and ring kernels, qkv_rope.cu's prefill kernel).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace zinfer::gpu::cuda {

// An attribute of the current device (0 if it cannot be read: launches then fail with the error).
inline int device_attribute(cudaDeviceAttr attribute) {
  int device = 0, value = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
    return 0;
  }
  return value;
}

// Shared memory (dynamic and static) one block may have where `blocks` blocks share an SM: the SM's
// shared memory split evenly, less what the driver reserves per block. Negative where that leaves
// nothing (or the device cannot be asked).
inline int shared_memory_per_block(int blocks) {
  return device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor) / blocks -
         device_attribute(cudaDevAttrReservedSharedMemoryPerBlock);
}

// SMs times the blocks of `threads` threads (and `dynamic_shared` bytes of dynamic shared memory)
// an SM holds; 0 if the device cannot be asked (the launch then reports the error).
template <typename Kernel>
int resident_blocks(Kernel kernel, int threads, size_t dynamic_shared = 0) {
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_shared) != cudaSuccess)
    return 0;
  return sms * per_sm;
}

}  // namespace zinfer::gpu::cuda
