// The K/V cache element types the attention kernels are instantiated for (.cu only): bf16, and
// e4m3fn codes (kv_cache_dtype fp8). An e4m3 value converts to bf16 exactly (3 mantissa bits into
// 7, every exponent in range), so a kernel that reads fp8 converts while it loads and computes
// as it does on bf16; the layer's k_scale multiplies the softmax scale and v_scale the output.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/e4m3_widen.cuh"

namespace zinfer::gpu::cuda {

template <typename CacheT>
__device__ __forceinline__ const CacheT* k_cache_of(const PagedKv& kv);
template <typename CacheT>
__device__ __forceinline__ const CacheT* v_cache_of(const PagedKv& kv);
template <>
__device__ __forceinline__ const __nv_bfloat16* k_cache_of<__nv_bfloat16>(const PagedKv& kv) { return kv.k_cache; }
template <>
__device__ __forceinline__ const __nv_bfloat16* v_cache_of<__nv_bfloat16>(const PagedKv& kv) { return kv.v_cache; }
template <>
__device__ __forceinline__ const __nv_fp8_e4m3* k_cache_of<__nv_fp8_e4m3>(const PagedKv& kv) { return kv.k_cache8; }
template <>
__device__ __forceinline__ const __nv_fp8_e4m3* v_cache_of<__nv_fp8_e4m3>(const PagedKv& kv) { return kv.v_cache8; }

// Eight consecutive elements of a cache row as bf16 (16 bytes): a bf16 row is read as is, an fp8
// row's 8 bytes converted.
template <typename CacheT>
__device__ __forceinline__ uint4 load8_as_bf16(const CacheT* p);
template <>
__device__ __forceinline__ uint4 load8_as_bf16<__nv_bfloat16>(const __nv_bfloat16* p) {
  return *reinterpret_cast<const uint4*>(p);
}
template <>
__device__ __forceinline__ uint4 load8_as_bf16<__nv_fp8_e4m3>(const __nv_fp8_e4m3* p) {
  return e4m3x8_to_bf16x8(*reinterpret_cast<const uint2*>(p));
}

// Eight elements of a cache row held as loaded (16 bytes of bf16, 8 of e4m3), so that a kernel
// issues its loads before it converts any of them.
template <typename CacheT>
struct Row8;
template <>
struct Row8<__nv_bfloat16> {
  uint4 raw;
  __device__ __forceinline__ void load(const __nv_bfloat16* p) { raw = *reinterpret_cast<const uint4*>(p); }
  __device__ __forceinline__ void zero() { raw = make_uint4(0, 0, 0, 0); }
  __device__ __forceinline__ uint4 bf16x8() const { return raw; }
};
template <>
struct Row8<__nv_fp8_e4m3> {
  uint2 raw;
  __device__ __forceinline__ void load(const __nv_fp8_e4m3* p) { raw = *reinterpret_cast<const uint2*>(p); }
  __device__ __forceinline__ void zero() { raw = make_uint2(0, 0); }
  __device__ __forceinline__ uint4 bf16x8() const { return e4m3x8_to_bf16x8(raw); }
};

}  // namespace zinfer::gpu::cuda
