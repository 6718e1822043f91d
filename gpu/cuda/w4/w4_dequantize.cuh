// One lane's int4 word of the tile layout (gpu/quant/int4_tiles.h) as its mma A fragment, shared
// by the W4A16 kernels of few rows (mma.sync) and of many rows (wgmma, whose register A fragment
// is the same layout per warp).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// (v & 0x000F000F) | 0x43004300: the nibbles at bits 0 and 16 as bf16 128 + q (128.0's exponent
// makes the mantissa's last bit worth 1, so the nibble is the value's integer part).
__device__ __forceinline__ uint32_t w4_lop3_mask_or(uint32_t v) {
  uint32_t r;
  // immLut 0xEA = (a & b) | c
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(r) : "r"(v), "r"(0x000F000Fu), "r"(0x43004300u));
  return r;
}

__device__ __forceinline__ uint32_t w4_bf16x2_sub(uint32_t a, uint32_t b) {
  const __nv_bfloat162 d = __hsub2(*reinterpret_cast<const __nv_bfloat162*>(&a),
                                   *reinterpret_cast<const __nv_bfloat162*>(&b));
  return *reinterpret_cast<const uint32_t*>(&d);
}

// The A fragment (q − zero, exact in bf16) of one 16 × 16 tile from its word; zr / zr8:
// bf16x2(128 + zero) of the fragment's rows r and r + 8.
__device__ __forceinline__ void w4_dequantize_fragment(uint32_t w, uint32_t zr, uint32_t zr8, uint32_t* a) {
  a[0] = w4_bf16x2_sub(w4_lop3_mask_or(w), zr);
  a[1] = w4_bf16x2_sub(w4_lop3_mask_or(w >> 4), zr8);
  a[2] = w4_bf16x2_sub(w4_lop3_mask_or(w >> 8), zr);
  a[3] = w4_bf16x2_sub(w4_lop3_mask_or(w >> 12), zr8);
}

__device__ __forceinline__ uint32_t w4_bf16x2(float v) {
  const __nv_bfloat162 d = __float2bfloat162_rn(v);
  return *reinterpret_cast<const uint32_t*>(&d);
}

__device__ __forceinline__ uint32_t w4_bf16x2_mul(uint32_t a, uint32_t b) {
  const __nv_bfloat162 d = __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&a),
                                   *reinterpret_cast<const __nv_bfloat162*>(&b));
  return *reinterpret_cast<const uint32_t*>(&d);
}

// The A fragment bf16(bf16(q − zero) · scale) of one tile's word: sr / sr8 are bf16x2(scale) of
// rows r and r + 8 (q − zero is exact, so one rounding, of the product, after the scale's own).
__device__ __forceinline__ void w4_dequantize_scaled(uint32_t w, uint32_t zr, uint32_t zr8, uint32_t sr, uint32_t sr8,
                                                     uint32_t* a) {
  w4_dequantize_fragment(w, zr, zr8, a);
  a[0] = w4_bf16x2_mul(a[0], sr);
  a[1] = w4_bf16x2_mul(a[1], sr8);
  a[2] = w4_bf16x2_mul(a[2], sr);
  a[3] = w4_bf16x2_mul(a[3], sr8);
}

}  // namespace zinfer::gpu::cuda
