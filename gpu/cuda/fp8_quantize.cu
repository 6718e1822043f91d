#include "gpu/cuda/fp8_kernels.h"

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

// x's code at `at`, into x_q and/or x_f16. IEEE division (no fast-math here), as the CPU reference
// divides; the conversion rounds to nearest even and saturates to ±448 (NaN stays NaN).
__device__ void write_code(float x, float s, size_t at, __nv_fp8_e4m3* x_q, __half* x_f16) {
  const __nv_fp8_storage_t code = __nv_cvt_float_to_fp8(__fdiv_rn(x, s), __NV_SATFINITE, __NV_E4M3);
  if (x_q != nullptr) x_q[at].__x = code;
  if (x_f16 != nullptr) x_f16[at] = __half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3));
}

// One block per (row, group): the group's amax by a block reduction, then its codes.
__global__ void __launch_bounds__(kThreads) fp8_quantize_kernel(const __nv_bfloat16* __restrict__ x, int32_t K,
                                                                int32_t group, int32_t groups, float static_scale,
                                                                __nv_fp8_e4m3* __restrict__ x_q,
                                                                __half* __restrict__ x_f16, float* __restrict__ s_x,
                                                                bool by_group) {
  __shared__ float scratch[kThreads / 32];
  const int32_t m = blockIdx.x / groups, g = blockIdx.x % groups;
  const int32_t k0 = g * group, k1 = min(K, k0 + group);
  const __nv_bfloat16* row = x + static_cast<size_t>(m) * K;
  float s = static_scale;
  if (!(static_scale > 0.f)) {
    float a = 0.f;
    for (int32_t k = k0 + threadIdx.x; k < k1; k += kThreads) a = fmaxf(a, fabsf(__bfloat162float(row[k])));
    s = dynamic_scale(block_reduce(a, scratch, true));
  }
  if (threadIdx.x == 0)
    s_x[by_group ? static_cast<size_t>(g) * gridDim.x / groups + m : static_cast<size_t>(m) * groups + g] = s;
  for (int32_t k = k0 + threadIdx.x; k < k1; k += kThreads)
    write_code(__bfloat162float(row[k]), s, static_cast<size_t>(m) * K + k, x_q, x_f16);
}

// One block per row: the row's RMS, then its bf16 normed values (as rmsnorm.cu rounds them), their
// amax, and their codes; the normed values are computed again for the codes rather than kept (a
// row is at most a few tens of KB, in L1/L2 after the first pass).
__global__ void __launch_bounds__(kThreads) fp8_norm_quantize_kernel(const float* __restrict__ residual,
                                                                     const float* __restrict__ weight, float eps,
                                                                     int32_t K, float static_scale,
                                                                     __nv_fp8_e4m3* __restrict__ x_q,
                                                                     __half* __restrict__ x_f16,
                                                                     float* __restrict__ s_x) {
  __shared__ float scratch[kThreads / 32];
  const int32_t m = blockIdx.x;
  const float* row = residual + static_cast<size_t>(m) * K;
  float sum_sq = 0.f;
  for (int32_t k = threadIdx.x; k < K; k += kThreads) sum_sq += row[k] * row[k];
  const float inv_rms = rsqrtf(block_reduce(sum_sq, scratch, false) / static_cast<float>(K) + eps);
  float s = static_scale;
  if (!(static_scale > 0.f)) {
    float a = 0.f;
    for (int32_t k = threadIdx.x; k < K; k += kThreads)
      a = fmaxf(a, fabsf(__bfloat162float(__float2bfloat16(row[k] * inv_rms * weight[k]))));
    s = dynamic_scale(block_reduce(a, scratch, true));
  }
  if (threadIdx.x == 0) s_x[m] = s;
  for (int32_t k = threadIdx.x; k < K; k += kThreads)
    write_code(__bfloat162float(__float2bfloat16(row[k] * inv_rms * weight[k])), s, static_cast<size_t>(m) * K + k,
               x_q, x_f16);
}

}  // namespace

cudaError_t launch_fp8_norm_quantize(const float* residual, const float* norm_weight, float eps, int32_t M, int32_t K,
                                     float static_scale, __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream,
                                     __half* x_f16) {
  if (M == 0) return cudaSuccess;
  if (x_q == nullptr && x_f16 == nullptr) return cudaErrorInvalidValue;
  fp8_norm_quantize_kernel<<<static_cast<unsigned>(M), kThreads, 0, stream>>>(residual, norm_weight, eps, K,
                                                                               static_scale, x_q, x_f16, s_x);
  return cudaGetLastError();
}

cudaError_t launch_fp8_quantize(const __nv_bfloat16* x, int32_t M, int32_t K, int32_t group, float static_scale,
                                __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream, __half* x_f16,
                                Fp8ScaleOrder order) {
  if (M == 0) return cudaSuccess;
  if (x_q == nullptr && x_f16 == nullptr) return cudaErrorInvalidValue;
  const int32_t groups = (K + group - 1) / group;
  fp8_quantize_kernel<<<static_cast<unsigned>(M) * groups, kThreads, 0, stream>>>(
      x, K, group, groups, static_scale, x_q, x_f16, s_x, order == Fp8ScaleOrder::kByGroup);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
