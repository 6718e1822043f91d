#include "gpu/cuda/rmsnorm.h"

namespace zinfer::gpu::cuda {
namespace {

constexpr int kThreads = 256;

__device__ float block_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < kThreads / 32; ++w) total += scratch[w];
  return total;
}

__global__ void __launch_bounds__(kThreads) add_rmsnorm_kernel(float* __restrict__ residual,
                                                               const __nv_bfloat16* __restrict__ delta,
                                                               const float* __restrict__ weight,
                                                               __nv_bfloat16* __restrict__ out,
                                                               int32_t hidden, float eps,
                                                               const int32_t* __restrict__ rows) {
  __shared__ float scratch[kThreads / 32];
  const int64_t base = static_cast<int64_t>(rows != nullptr ? rows[blockIdx.x] : blockIdx.x) * hidden;
  const int64_t out_base = static_cast<int64_t>(blockIdx.x) * hidden;
  float* row = residual + base;
  float sum_sq = 0.f;
  for (int32_t i = threadIdx.x; i < hidden; i += kThreads) {
    float v = row[i];
    if (delta != nullptr) {
      v += __bfloat162float(delta[base + i]);
      row[i] = v;
    }
    sum_sq += v * v;
  }
  const float inv_rms = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(hidden) + eps);
  for (int32_t i = threadIdx.x; i < hidden; i += kThreads) {
    out[out_base + i] = __float2bfloat16(row[i] * inv_rms * weight[i]);
  }
}

}  // namespace

cudaError_t launch_add_rmsnorm(float* residual, const __nv_bfloat16* delta, const float* weight,
                               __nv_bfloat16* out, int32_t num_rows, int32_t hidden, float eps,
                               cudaStream_t stream, const int32_t* rows) {
  if (num_rows == 0) return cudaSuccess;
  add_rmsnorm_kernel<<<num_rows, kThreads, 0, stream>>>(residual, delta, weight, out, hidden, eps, rows);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
