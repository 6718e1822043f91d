// Two bf16 values in one 32-bit register (low half first), as loads of bf16 rows and the MMAs'
// fragments hold them: packing two floats, and each half back to float (a 16-bit shift: bf16 is
// float32's upper half).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ float bf16_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }

}  // namespace zinfer::gpu::cuda
