#include "gpu/cuda/fp8_kernels.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace zinfer::gpu::cuda {
namespace {

constexpr int kThreads = 256;

__device__ float block_reduce(float v, float* scratch, bool max) {
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = max ? fmaxf(v, o) : v + o;
  }
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = 0.f;  // amax ≥ 0 and sums start at 0 alike
  for (int w = 0; w < kThreads / 32; ++w) r = max ? fmaxf(r, scratch[w]) : r + scratch[w];
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

// A dynamic scale from the group's amax (fp8.h).
__device__ float dynamic_scale(float amax) { return fmaxf(amax, 1e-10f) / 448.f; }

// x's e4m3 code. IEEE division (no fast-math here), as the CPU reference divides; the conversion
// rounds to nearest even and saturates to ±448 (NaN stays NaN).
__device__ __forceinline__ uint8_t code_of(float x, float s) {
  return __nv_cvt_float_to_fp8(__fdiv_rn(x, s), __NV_SATFINITE, __NV_E4M3);
}

// x's code at `at`, into x_q and/or x_f16.
__device__ void write_code(float x, float s, size_t at, __nv_fp8_e4m3* x_q, __half* x_f16) {
  const uint8_t code = code_of(x, s);
  if (x_q != nullptr) x_q[at].__x = code;
  if (x_f16 != nullptr) x_f16[at] = __half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3));
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

template <int V>
__device__ __forceinline__ Inputs<V> load_inputs(const __nv_bfloat16* p) {
  Inputs<V> e;
  if constexpr (V == 1) {
    e.v[0] = __bfloat162float(*p);
  } else {
    static_assert(V == 8);
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(h[i]);
      e.v[2 * i] = f.x;
      e.v[2 * i + 1] = f.y;
    }
  }
  return e;
}

template <int V>
__device__ __forceinline__ float amax_of(const Inputs<V>& e, float a) {
  for (float v : e.v) a = fmaxf(a, fabsf(v));
  return a;
}

// The codes of x[at .. at + V), as write_code computes each.
template <int V>
__device__ __forceinline__ void write_codes(const Inputs<V>& e, float s, size_t at, __nv_fp8_e4m3* x_q,
                                            __half* x_f16) {
  if constexpr (V == 1) {
    write_code(e.v[0], s, at, x_q, x_f16);
  } else {
    uint8_t codes[8];
    for (int i = 0; i < 8; ++i) codes[i] = code_of(e.v[i], s);
    if (x_q != nullptr) *reinterpret_cast<uint2*>(x_q + at) = *reinterpret_cast<const uint2*>(codes);
    if (x_f16 != nullptr) {
      __half h[8];
      for (int i = 0; i < 8; ++i) h[i] = __half(__nv_cvt_fp8_to_halfraw(codes[i], __NV_E4M3));
      *reinterpret_cast<uint4*>(x_f16 + at) = *reinterpret_cast<const uint4*>(h);
    }
  }
}

// One block per (row, group), V inputs per load (8: K and group multiples of 8): the group's
// amax by a block reduction, then its codes in a second pass (the group, up to tens of KB, is
// then in L1 or L2).
template <int V>
__global__ void __launch_bounds__(kThreads) fp8_quantize_block_kernel(const __nv_bfloat16* __restrict__ x, int32_t M,
                                                                      int32_t K, int32_t group, int32_t groups,
                                                                      float static_scale,
                                                                      __nv_fp8_e4m3* __restrict__ x_q,
                                                                      __half* __restrict__ x_f16,
                                                                      float* __restrict__ s_x, bool by_group) {
  __shared__ float scratch[kThreads / 32];
  const int32_t m = blockIdx.x / groups, g = blockIdx.x % groups;
  const int32_t k0 = g * group, k1 = min(K, k0 + group);
  const size_t row = static_cast<size_t>(m) * K;
  float s = static_scale;
  if (!(static_scale > 0.f)) {
    float a = 0.f;
    for (int32_t k = k0 + threadIdx.x * V; k < k1; k += kThreads * V) a = amax_of(load_inputs<V>(x + row + k), a);
    s = dynamic_scale(block_reduce(a, scratch, true));
  }
  if (threadIdx.x == 0) s_x[scale_index(m, g, M, groups, by_group)] = s;
  for (int32_t k = k0 + threadIdx.x * V; k < k1; k += kThreads * V)
    write_codes(load_inputs<V>(x + row + k), s, row + k, x_q, x_f16);
}

__device__ __forceinline__ float warp_max(float a) {
  for (int off = 16; off > 0; off >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, off));
  return a;
}

// One warp per (row, group) of at most kWarpInputs inputs, K and group multiples of 8: the
// group's inputs stay in registers between the amax and the codes (one read of x).
constexpr int kWarpVectors = 4;
constexpr int kWarpInputs = 32 * 8 * kWarpVectors;

__global__ void __launch_bounds__(kThreads) fp8_quantize_warp_kernel(const __nv_bfloat16* __restrict__ x, int32_t M,
                                                                     int32_t K, int32_t group, int32_t groups,
                                                                     float static_scale,
                                                                     __nv_fp8_e4m3* __restrict__ x_q,
                                                                     __half* __restrict__ x_f16,
                                                                     float* __restrict__ s_x, bool by_group) {
  const int64_t item = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (item >= static_cast<int64_t>(M) * groups) return;  // whole warps leave together
  const int32_t m = static_cast<int32_t>(item / groups), g = static_cast<int32_t>(item % groups);
  const int32_t k0 = g * group, k1 = min(K, k0 + group);
  const size_t row = static_cast<size_t>(m) * K;
  Inputs<8> e[kWarpVectors];
  float a = 0.f;
  for (int i = 0; i < kWarpVectors; ++i) {
    const int32_t k = k0 + (i * 32 + lane) * 8;
    if (k < k1) {
      e[i] = load_inputs<8>(x + row + k);
      a = amax_of(e[i], a);
    }
  }
  const float s = static_scale > 0.f ? static_scale : dynamic_scale(warp_max(a));
  if (lane == 0) s_x[scale_index(m, g, M, groups, by_group)] = s;
  for (int i = 0; i < kWarpVectors; ++i) {
    const int32_t k = k0 + (i * 32 + lane) * 8;
    if (k < k1) write_codes(e[i], s, row + k, x_q, x_f16);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// One block per row: the row's RMS, then its bf16 normed values (as rmsnorm.cu rounds them), their
// amax, and their codes; the normed values are computed again for the codes rather than kept (a
// row is at most a few tens of KB, in L1/L2 after the first pass). V inputs per load: 4 (16-byte
// loads of residual and weight) where K and the pointers allow, else 1.
template <int V>
__global__ void __launch_bounds__(kThreads) fp8_norm_quantize_kernel(const float* __restrict__ residual,
                                                                     const float* __restrict__ weight, float eps,
                                                                     int32_t K, float static_scale,
                                                                     __nv_fp8_e4m3* __restrict__ x_q,
                                                                     __half* __restrict__ x_f16,
                                                                     float* __restrict__ s_x) {
  using Vec = std::conditional_t<V == 4, float4, float>;
  using Floats = Inputs<V>;
  auto at = [](const float* p, int32_t k) {
    Floats out;
    *reinterpret_cast<Vec*>(out.v) = *reinterpret_cast<const Vec*>(p + k);
    return out;
  };
  __shared__ float scratch[kThreads / 32];
  const int32_t m = blockIdx.x;
  const float* row = residual + static_cast<size_t>(m) * K;
  float sum_sq = 0.f;
  for (int32_t k = threadIdx.x * V; k < K; k += kThreads * V) {
    const Floats r = at(row, k);
    for (int i = 0; i < V; ++i) sum_sq += r.v[i] * r.v[i];
  }
  const float inv_rms = rsqrtf(block_reduce(sum_sq, scratch, false) / static_cast<float>(K) + eps);
  auto normed = [&](int32_t k) {
    const Floats r = at(row, k), w = at(weight, k);
    Floats y;
    for (int i = 0; i < V; ++i) y.v[i] = __bfloat162float(__float2bfloat16(r.v[i] * inv_rms * w.v[i]));
    return y;
  };
  float s = static_scale;
  if (!(static_scale > 0.f)) {
    float a = 0.f;
    for (int32_t k = threadIdx.x * V; k < K; k += kThreads * V)
      for (float y : normed(k).v) a = fmaxf(a, fabsf(y));
    s = dynamic_scale(block_reduce(a, scratch, true));
  }
  if (threadIdx.x == 0) s_x[m] = s;
  for (int32_t k = threadIdx.x * V; k < K; k += kThreads * V) {
    const Floats y = normed(k);
    for (int i = 0; i < V; ++i) write_code(y.v[i], s, static_cast<size_t>(m) * K + k + i, x_q, x_f16);
  }
}

}  // namespace

cudaError_t launch_fp8_norm_quantize(const float* residual, const float* norm_weight, float eps, int32_t M, int32_t K,
                                     float static_scale, __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream,
                                     __half* x_f16) {
  if (M == 0) return cudaSuccess;
  if (x_q == nullptr && x_f16 == nullptr) return cudaErrorInvalidValue;
  if (K % 4 == 0 && aligned16(residual) && aligned16(norm_weight))
    fp8_norm_quantize_kernel<4><<<static_cast<unsigned>(M), kThreads, 0, stream>>>(residual, norm_weight, eps, K,
                                                                                  static_scale, x_q, x_f16, s_x);
  else
    fp8_norm_quantize_kernel<1><<<static_cast<unsigned>(M), kThreads, 0, stream>>>(residual, norm_weight, eps, K,
                                                                                  static_scale, x_q, x_f16, s_x);
  return cudaGetLastError();
}

cudaError_t launch_fp8_quantize(const __nv_bfloat16* x, int32_t M, int32_t K, int32_t group, float static_scale,
                                __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream, __half* x_f16,
                                Fp8ScaleOrder order) {
  if (M == 0) return cudaSuccess;
  if (x_q == nullptr && x_f16 == nullptr) return cudaErrorInvalidValue;
  const int32_t groups = (K + group - 1) / group;
  const bool by_group = order == Fp8ScaleOrder::kByGroup;
  // The vector kernels need every 8 inputs' bytes aligned: rows and groups start on multiples of 8.
  const bool vectors = K % 8 == 0 && group % 8 == 0 && aligned16(x) && aligned16(x_f16) &&
                       reinterpret_cast<uintptr_t>(x_q) % 8 == 0;
  const int64_t items = static_cast<int64_t>(M) * groups;
  if (vectors && std::min(group, K) <= kWarpInputs) {
    const int64_t blocks = (items * 32 + kThreads - 1) / kThreads;
    fp8_quantize_warp_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, M, K, group, groups,
                                                                                     static_scale, x_q, x_f16, s_x,
                                                                                     by_group);
  } else if (vectors) {
    fp8_quantize_block_kernel<8><<<static_cast<unsigned>(items), kThreads, 0, stream>>>(
        x, M, K, group, groups, static_scale, x_q, x_f16, s_x, by_group);
  } else {
    fp8_quantize_block_kernel<1><<<static_cast<unsigned>(items), kThreads, 0, stream>>>(
        x, M, K, group, groups, static_scale, x_q, x_f16, s_x, by_group);
  }
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
