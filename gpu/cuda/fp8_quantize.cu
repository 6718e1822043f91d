#include "gpu/cuda/fp8_kernels.h"

namespace zinfer::gpu::cuda {
namespace {

constexpr int kThreads = 256;

// One block per (row, group): the group's amax by a block reduction, then its codes.
__global__ void fp8_quantize_kernel(const __nv_bfloat16* __restrict__ x, int32_t K, int32_t group, int32_t groups,
                                    float static_scale, __nv_fp8_e4m3* __restrict__ x_q, __half* __restrict__ x_f16,
                                    float* __restrict__ s_x) {
  const int32_t m = blockIdx.x / groups, g = blockIdx.x % groups;
  const int32_t k0 = g * group, k1 = min(K, k0 + group);
  const __nv_bfloat16* row = x + static_cast<size_t>(m) * K;
  __shared__ float partial[kThreads / 32];
  __shared__ float scale;
  if (static_scale > 0.f) {
    if (threadIdx.x == 0) scale = static_scale;
  } else {
    float a = 0.f;
    for (int32_t k = k0 + threadIdx.x; k < k1; k += blockDim.x) a = fmaxf(a, fabsf(__bfloat162float(row[k])));
    for (int off = 16; off > 0; off >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, off));
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = a;
    __syncthreads();
    if (threadIdx.x == 0) {
      float amax = 0.f;
      for (int w = 0; w < kThreads / 32; ++w) amax = fmaxf(amax, partial[w]);
      scale = fmaxf(amax, 1e-10f) / 448.f;
    }
  }
  __syncthreads();
  const float s = scale;
  if (threadIdx.x == 0) s_x[static_cast<size_t>(m) * groups + g] = s;
  for (int32_t k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
    // IEEE division (no fast-math here), as the CPU reference divides; the conversion rounds to
    // nearest even and saturates to ±448 (NaN stays NaN).
    const float v = __fdiv_rn(__bfloat162float(row[k]), s);
    const __nv_fp8_storage_t code = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
    if (x_q != nullptr) x_q[static_cast<size_t>(m) * K + k].__x = code;
    if (x_f16 != nullptr) x_f16[static_cast<size_t>(m) * K + k] = __half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3));
  }
}

}  // namespace

cudaError_t launch_fp8_quantize(const __nv_bfloat16* x, int32_t M, int32_t K, int32_t group, float static_scale,
                                __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream, __half* x_f16) {
  if (M == 0) return cudaSuccess;
  if (x_q == nullptr && x_f16 == nullptr) return cudaErrorInvalidValue;
  const int32_t groups = (K + group - 1) / group;
  fp8_quantize_kernel<<<static_cast<unsigned>(M) * groups, kThreads, 0, stream>>>(x, K, group, groups, static_scale,
                                                                                  x_q, x_f16, s_x);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
