// A 16-byte load of weight bytes that a kernel reads exactly once (the GEMV, the W4A16 kernel):
// it bypasses L1 (which keeps x and the activations) and lets L2 fetch 256-byte blocks (a warp
// reads 512 contiguous bytes anyway).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

__device__ __forceinline__ uint4 load_streamed(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

}  // namespace zinfer::gpu::cuda
