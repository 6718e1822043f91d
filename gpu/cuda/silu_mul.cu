#include "gpu/cuda/silu_mul.h"

namespace zinfer::gpu::cuda {
namespace {

__global__ void silu_mul_kernel(const __nv_bfloat16* __restrict__ gate_up, __nv_bfloat16* __restrict__ out,
                                int32_t inter) {
  const int64_t row = blockIdx.y;
  const __nv_bfloat16* gate = gate_up + row * 2 * inter;
  const __nv_bfloat16* up = gate + inter;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < inter; i += gridDim.x * blockDim.x) {
    const float g = __bfloat162float(gate[i]);
    const float silu = g / (1.f + expf(-g));
    out[row * inter + i] = __float2bfloat16(silu * __bfloat162float(up[i]));
  }
}

}  // namespace

cudaError_t launch_silu_mul(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int32_t num_rows,
                            int32_t inter, cudaStream_t stream) {
  if (num_rows == 0) return cudaSuccess;
  const int threads = 256;
  int blocks_x = (inter + threads - 1) / threads;
  if (blocks_x > 64) blocks_x = 64;
  silu_mul_kernel<<<dim3(blocks_x, num_rows), threads, 0, stream>>>(gate_up, out, inter);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
