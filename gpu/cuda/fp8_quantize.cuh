// What the FP8 activation-quantization kernels share (fp8_quantize.cu, fp8_norm_quantize.cu, and
// the prologue of the FP8 GEMV, fp8/fp8_gemv_kernel.cuh): the scale and code arithmetic of
// gpu/quant/fp8.h, the block reduction, vector loads and stores of 1, 4 or 8 values, and where a
// row's values come from (x itself, or the gated MLP's silu(gate) · up). Included by those kernels
// only: everything here is internal to them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "gpu/cuda/silu.cuh"

namespace zinfer::gpu::cuda::fp8_quantize_detail {

constexpr int kThreads = 256;

// The sum (or max) of v over a block of kBlockThreads threads; scratch holds a float per warp.
template <int kBlockThreads = kThreads>
__device__ inline float block_reduce(float v, float* scratch, bool max) {
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = max ? fmaxf(v, o) : v + o;
  }
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = 0.f;  // amax ≥ 0 and sums start at 0 alike
  for (int w = 0; w < kBlockThreads / 32; ++w) r = max ? fmaxf(r, scratch[w]) : r + scratch[w];
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

// A dynamic scale from the group's amax (fp8.h).
__device__ inline float dynamic_scale(float amax) { return fmaxf(amax, 1e-10f) / 448.f; }

// The factor the codes are computed with: 1 / s rounded to float32, once per group (fp8.h).
__device__ __forceinline__ float inverse_scale(float s) { return __frcp_rn(s); }

// x's e4m3 code from the group's inverse scale: x · (1 / s) rounded to float32 (one multiply per
// input, as vLLM's quantization kernels and the CPU reference compute it; a division per input made
// these kernels bound by instructions rather than HBM), then rounded to nearest even and saturated
// to ±448 (NaN stays NaN).
__device__ __forceinline__ uint8_t code_of(float x, float inv_s) {
  return __nv_cvt_float_to_fp8(__fmul_rn(x, inv_s), __NV_SATFINITE, __NV_E4M3);
}

// x's code at `at`, into x_q and/or x_f16.
__device__ inline void write_code(float x, float inv_s, size_t at, __nv_fp8_e4m3* x_q, __half* x_f16) {
  const uint8_t code = code_of(x, inv_s);
  if (x_q != nullptr) x_q[at].__x = code;
  if (x_f16 != nullptr) x_f16[at] = __half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3));
}

// Item `item` of the (row, group) items in row-major order: row m, group g, inputs [k0, k1).
struct Item {
  int32_t m, g, k0, k1;
};
__device__ __forceinline__ Item item_at(int64_t item, int32_t groups, int32_t group, int32_t K) {
  const int32_t m = static_cast<int32_t>(item / groups), g = static_cast<int32_t>(item % groups);
  return {m, g, g * group, min(K, g * group + group)};
}

// Where row m's scale of group g goes (Fp8ScaleOrder).
__device__ __forceinline__ size_t scale_index(int32_t m, int32_t g, int32_t M, int32_t groups, bool by_group) {
  return by_group ? static_cast<size_t>(g) * M + m : static_cast<size_t>(m) * groups + g;
}

// V consecutive inputs: 1 (a scalar load), or 8 as one 16-byte load with their codes as one
// 8-byte (e4m3) or 16-byte (f16) store, so that a warp moves 512 bytes of x per instruction
// instead of 64 (the scalar form is bound by its load instructions, not by HBM).
template <int V>
struct Inputs {
  float v[V];
};

// Eight bf16 (16 bytes) as floats.
__device__ __forceinline__ Inputs<8> widen(const uint4& u) {
  Inputs<8> e;
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    e.v[2 * i] = f.x;
    e.v[2 * i + 1] = f.y;
  }
  return e;
}

template <int V>
__device__ __forceinline__ Inputs<V> load_inputs(const __nv_bfloat16* p) {
  Inputs<V> e;
  if constexpr (V == 1) {
    e.v[0] = __bfloat162float(*p);
  } else {
    static_assert(V == 8);
    e = widen(*reinterpret_cast<const uint4*>(p));
  }
  return e;
}

template <int V>
__device__ __forceinline__ float amax_of(const Inputs<V>& e, float a) {
  for (float v : e.v) a = fmaxf(a, fabsf(v));
  return a;
}

// The codes of x[at .. at + V), as write_code computes each: V = 4 or 8 as one 4- or 8-byte store
// of e4m3 codes and one 8- or 16-byte store of their f16 values.
template <int V>
__device__ __forceinline__ void write_codes(const Inputs<V>& e, float inv_s, size_t at, __nv_fp8_e4m3* x_q,
                                            __half* x_f16) {
  if constexpr (V == 1) {
    write_code(e.v[0], inv_s, at, x_q, x_f16);
  } else {
    static_assert(V == 4 || V == 8);
    using Codes = std::conditional_t<V == 4, uint32_t, uint2>;
    using Halves = std::conditional_t<V == 4, uint2, uint4>;
    alignas(8) uint8_t codes[V];
    for (int i = 0; i < V; ++i) codes[i] = code_of(e.v[i], inv_s);
    if (x_q != nullptr) *reinterpret_cast<Codes*>(x_q + at) = *reinterpret_cast<const Codes*>(codes);
    if (x_f16 != nullptr) {
      alignas(16) __half h[V];
      for (int i = 0; i < V; ++i) h[i] = __half(__nv_cvt_fp8_to_halfraw(codes[i], __NV_E4M3));
      *reinterpret_cast<Halves*>(x_f16 + at) = *reinterpret_cast<const Halves*>(h);
    }
  }
}

// Where the values quantized come from: x [M, K] itself, or the gated MLP's activation
// silu(gate) · up of gate_up [M, 2K] (gate in columns [0, K), up in [K, 2K)), rounded to bf16 as
// silu_mul.cu writes it, so that the down projection's codes are those of silu_mul's output
// without that output being written and read back. load<V> reads V inputs and gives their values;
// fetch (the bytes of 8 inputs) and values (their values) split that for kernels that fetch an
// item's bytes while they compute the one before.
__device__ __forceinline__ float silu_mul_bf16(float gate, float up) {
  return __bfloat162float(__float2bfloat16(silu_times(gate, up)));
}

struct PlainRows {
  const __nv_bfloat16* x;
  int32_t k;
  using Raw = uint4;
  static constexpr int kRowWidths = 1;  // a row is k bf16
  __device__ __forceinline__ const __nv_bfloat16* row(int32_t m) const { return x + static_cast<size_t>(m) * k; }
  // The same rows with row 0 at p (a copy of one row in shared memory).
  __device__ __forceinline__ PlainRows rebased(const __nv_bfloat16* p) const { return {p, k}; }
  template <int V>
  __device__ __forceinline__ Inputs<V> load(int32_t m, int32_t at) const {
    return load_inputs<V>(row(m) + at);
  }
  __device__ __forceinline__ Raw fetch(int32_t m, int32_t at) const {
    return *reinterpret_cast<const uint4*>(row(m) + at);
  }
  __device__ __forceinline__ static Inputs<8> values(const Raw& r) { return widen(r); }
};

struct GatedRows {
  const __nv_bfloat16* gate_up;
  int32_t k;
  static constexpr int kRowWidths = 2;  // a row is gate then up, 2k bf16
  __device__ __forceinline__ const __nv_bfloat16* row(int32_t m) const {
    return gate_up + static_cast<size_t>(m) * 2 * k;
  }
  __device__ __forceinline__ GatedRows rebased(const __nv_bfloat16* p) const { return {p, k}; }
  struct Raw {
    uint4 gate, up;
  };
  template <int V>
  __device__ __forceinline__ static Inputs<V> gated(const Inputs<V>& gate, const Inputs<V>& up) {
    Inputs<V> e;
    for (int i = 0; i < V; ++i) e.v[i] = silu_mul_bf16(gate.v[i], up.v[i]);
    return e;
  }
  template <int V>
  __device__ __forceinline__ Inputs<V> load(int32_t m, int32_t at) const {
    const __nv_bfloat16* gate = row(m) + at;
    return gated(load_inputs<V>(gate), load_inputs<V>(gate + k));
  }
  __device__ __forceinline__ Raw fetch(int32_t m, int32_t at) const {
    const __nv_bfloat16* gate = row(m) + at;
    return {*reinterpret_cast<const uint4*>(gate), *reinterpret_cast<const uint4*>(gate + k)};
  }
  __device__ __forceinline__ static Inputs<8> values(const Raw& r) { return gated(widen(r.gate), widen(r.up)); }
};

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace zinfer::gpu::cuda::fp8_quantize_detail
