#include "gpu/cuda/fp8_kernels.h"

namespace zinfer::gpu::cuda {
namespace {

__device__ __forceinline__ void store(Fp8Output out, size_t i, float v) {
  if (out.add_f32 != nullptr) out.add_f32[i] += v;
  else out.bf16[i] = __float2bfloat16(v);
}

constexpr int kTile = 16;

// A 16 x 16 tile of y per block, K in steps of 16 through shared memory; each thread keeps its
// element's sum of the current group and folds it in with the group's scales when the group ends.
__global__ void fp8_gemm_direct_kernel(const __nv_fp8_e4m3* __restrict__ x_q, const float* __restrict__ s_x,
                                       const __nv_fp8_e4m3* __restrict__ w_q, const float* __restrict__ s_w,
                                       int32_t M, int32_t N, int32_t K, int32_t group, int32_t groups,
                                       Fp8Output out) {
  __shared__ float xs[kTile][kTile + 1];
  __shared__ float ws[kTile][kTile + 1];
  const int32_t tm = threadIdx.y, tn = threadIdx.x;
  const int32_t m = blockIdx.y * kTile + tm, n = blockIdx.x * kTile + tn;
  float acc = 0.f, part = 0.f;
  int32_t g = 0, group_end = min(group, K);
  for (int32_t k0 = 0; k0 < K; k0 += kTile) {
    const int32_t kx = k0 + tn, wm = blockIdx.x * kTile + tm;
    xs[tm][tn] = m < M && kx < K ? static_cast<float>(x_q[static_cast<size_t>(m) * K + kx]) : 0.f;
    ws[tm][tn] = wm < N && kx < K ? static_cast<float>(w_q[static_cast<size_t>(wm) * K + kx]) : 0.f;
    __syncthreads();
    for (int32_t j = 0; j < kTile && k0 + j < K; ++j) {
      if (k0 + j == group_end) {  // the previous group is complete
        if (m < M && n < N) acc += part * (s_x[static_cast<size_t>(m) * groups + g] * s_w[static_cast<size_t>(n) * groups + g]);
        part = 0.f;
        ++g;
        group_end = min(group_end + group, K);
      }
      part = fmaf(xs[tm][j], ws[tn][j], part);
    }
    __syncthreads();
  }
  if (m < M && n < N) {
    acc += part * (s_x[static_cast<size_t>(m) * groups + g] * s_w[static_cast<size_t>(n) * groups + g]);
    store(out, static_cast<size_t>(m) * N + n, acc);
  }
}

}  // namespace

cudaError_t launch_fp8_gemm_direct(const __nv_fp8_e4m3* x_q, const float* s_x, const __nv_fp8_e4m3* w_q,
                                   const float* s_w, int32_t M, int32_t N, int32_t K, int32_t group, Fp8Output out,
                                   cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  const dim3 block(kTile, kTile), grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  fp8_gemm_direct_kernel<<<grid, block, 0, stream>>>(x_q, s_x, w_q, s_w, M, N, K, group, (K + group - 1) / group, out);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
