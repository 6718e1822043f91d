// e4m3fn codes widened exactly: to f16 in one instruction (sm_89+), or to bf16 (3 mantissa bits
// into 7, every exponent in range). The kernels that read fp8 (the FP8 KV cache's attention, the FP8
// linear layers' MMAs) convert with these as they load.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// Two e4m3 codes (low byte first) as a bf16 pair, exactly: e4m3 -> f16x2 is one instruction on
// sm_89+, f16 -> f32 -> bf16 loses nothing for these values.
__device__ __forceinline__ uint32_t e4m3x2_to_bf16x2(uint16_t codes) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes), __NV_E4M3);
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
  const __nv_bfloat162 b = __floats2bfloat162_rn(f.x, f.y);
  return *reinterpret_cast<const uint32_t*>(&b);
}

// Eight codes (8 bytes) as eight bf16 (16 bytes), in order.
__device__ __forceinline__ uint4 e4m3x8_to_bf16x8(uint2 codes) {
  uint4 out;
  out.x = e4m3x2_to_bf16x2(static_cast<uint16_t>(codes.x & 0xffffu));
  out.y = e4m3x2_to_bf16x2(static_cast<uint16_t>(codes.x >> 16));
  out.z = e4m3x2_to_bf16x2(static_cast<uint16_t>(codes.y & 0xffffu));
  out.w = e4m3x2_to_bf16x2(static_cast<uint16_t>(codes.y >> 16));
  return out;
}

// Two e4m3 codes (low byte first) as an f16 pair, exactly, in one instruction (sm_89+): kernels
// whose MMAs take f16 use this instead of the three-step bf16 widening above.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint16_t codes) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes), __NV_E4M3);
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

}  // namespace zinfer::gpu::cuda
