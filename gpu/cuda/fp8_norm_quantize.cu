// launch_fp8_norm_quantize (fp8_kernels.h): RMSNorm of the float32 residual rounded to bf16 as
// rmsnorm.cu rounds it, then quantized with one scale per row, one block per row. Rows of up to
// 1,024 · 4 · 4 inputs are read once into registers (VPT 16-byte loads per thread, all issued
// before the first use, by 256 to 1,024 threads) and kept there through the two reductions (the
// sum of squares, then the amax of the normed values) to the codes; wider rows, or residuals not
// 16-byte aligned, take three passes over the row (in L1/L2 after the first). Blocks walking the
// rows with the next row fetched ahead, as fp8_quantize.cu's row kernel does, were no faster here
// (docs/benchmarks/quantization.md).
#include "gpu/cuda/fp8_kernels.h"

#include <cstdint>

#include "gpu/cuda/fp8_quantize.cuh"

namespace zinfer::gpu::cuda {
namespace {

using namespace fp8_quantize_detail;

__device__ __forceinline__ Inputs<4> load4(const float* p) {
  Inputs<4> out;
  *reinterpret_cast<float4*>(out.v) = *reinterpret_cast<const float4*>(p);
  return out;
}

template <int THREADS, int VPT>
__global__ void __launch_bounds__(THREADS) fp8_norm_quantize_row_kernel(const float* __restrict__ residual,
                                                                         const float* __restrict__ weight, float eps,
                                                                         int32_t K, float static_scale,
                                                                         __nv_fp8_e4m3* __restrict__ x_q,
                                                                         __half* __restrict__ x_f16,
                                                                         float* __restrict__ s_x) {
  __shared__ float scratch[THREADS / 32];
  const int32_t m = blockIdx.x;
  const float* row = residual + static_cast<size_t>(m) * K;
  Inputs<4> y[VPT];
  float sum_sq = 0.f;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int32_t k = (i * THREADS + threadIdx.x) * 4;
    if (k < K) {
      y[i] = load4(row + k);
      for (float v : y[i].v) sum_sq += v * v;
    }
  }
  const float inv_rms = rsqrtf(block_reduce<THREADS>(sum_sq, scratch, false) / static_cast<float>(K) + eps);
  float a = 0.f;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int32_t k = (i * THREADS + threadIdx.x) * 4;
    if (k < K) {
      const Inputs<4> w = load4(weight + k);
      for (int j = 0; j < 4; ++j) y[i].v[j] = __bfloat162float(__float2bfloat16(y[i].v[j] * inv_rms * w.v[j]));
      a = amax_of(y[i], a);
    }
  }
  const float s = static_scale > 0.f ? static_scale : dynamic_scale(block_reduce<THREADS>(a, scratch, true));
  if (threadIdx.x == 0) s_x[m] = s;
  const float inv_s = inverse_scale(s);
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int32_t k = (i * THREADS + threadIdx.x) * 4;
    if (k < K) write_codes(y[i], inv_s, static_cast<size_t>(m) * K + k, x_q, x_f16);
  }
}

// The three-pass form. V inputs per load: 4 (16-byte loads of residual and weight) where K and the
// pointers allow, else 1.
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
  const float inv_s = inverse_scale(s);
  for (int32_t k = threadIdx.x * V; k < K; k += kThreads * V) {
    const Floats y = normed(k);
    for (int i = 0; i < V; ++i) write_code(y.v[i], inv_s, static_cast<size_t>(m) * K + k + i, x_q, x_f16);
  }
}

}  // namespace

cudaError_t launch_fp8_norm_quantize(const float* residual, const float* norm_weight, float eps, int32_t M, int32_t K,
                                     float static_scale, __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream,
                                     __half* x_f16) {
  if (M == 0) return cudaSuccess;
  if (x_q == nullptr && x_f16 == nullptr) return cudaErrorInvalidValue;
  // The row kernels store 4 codes (4 bytes) and their f16 values (8 bytes) at a time.
  const bool vectors = K % 4 == 0 && aligned16(residual) && aligned16(norm_weight) &&
                       reinterpret_cast<uintptr_t>(x_q) % 4 == 0 && reinterpret_cast<uintptr_t>(x_f16) % 8 == 0;
  auto launch = [&](auto kernel, int threads) {
    kernel<<<static_cast<unsigned>(M), threads, 0, stream>>>(residual, norm_weight, eps, K, static_scale, x_q, x_f16,
                                                             s_x);
  };
  if (!vectors) launch(fp8_norm_quantize_kernel<1>, kThreads);
  else if (K <= 256 * 4) launch(fp8_norm_quantize_row_kernel<256, 1>, 256);
  else if (K <= 256 * 4 * 2) launch(fp8_norm_quantize_row_kernel<256, 2>, 256);
  else if (K <= 256 * 4 * 4) launch(fp8_norm_quantize_row_kernel<256, 4>, 256);
  else if (K <= 512 * 4 * 4) launch(fp8_norm_quantize_row_kernel<512, 4>, 512);
  else if (K <= 1024 * 4 * 4) launch(fp8_norm_quantize_row_kernel<1024, 4>, 1024);
  else launch(fp8_norm_quantize_kernel<4>, kThreads);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
