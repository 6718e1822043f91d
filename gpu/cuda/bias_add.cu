#include "gpu/cuda/bias_add.h"

namespace zinfer::gpu::cuda {
namespace {

__global__ void bias_add_kernel(float* __restrict__ residual, const float* __restrict__ bias, int32_t width) {
  float* row = residual + static_cast<int64_t>(blockIdx.y) * width;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < width; i += gridDim.x * blockDim.x) row[i] += bias[i];
}

}  // namespace

cudaError_t launch_bias_add(float* residual, const float* bias, int32_t num_rows, int32_t width, cudaStream_t stream) {
  if (num_rows == 0 || width == 0) return cudaSuccess;
  const int threads = 256;
  int blocks_x = (width + threads - 1) / threads;
  if (blocks_x > 32) blocks_x = 32;
  bias_add_kernel<<<dim3(blocks_x, num_rows), threads, 0, stream>>>(residual, bias, width);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
