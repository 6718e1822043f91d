#include "gpu/cuda/random_fill.h"

namespace zinfer::gpu::cuda {
namespace {

__device__ inline float uniform_pm_sqrt3(uint64_t seed, int64_t i) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  return (2.f * u - 1.f) * 1.7320508f;
}

template <typename T>
__global__ void fill_kernel(T* out, int64_t n, uint64_t seed, float mean, float stddev) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = mean + stddev * uniform_pm_sqrt3(seed, i);
    if constexpr (sizeof(T) == 2) out[i] = __float2bfloat16(v); else out[i] = v;
  }
}

}  // namespace

cudaError_t launch_fill_random_bf16(__nv_bfloat16* out, int64_t n, uint64_t seed, float mean, float stddev,
                                    cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  fill_kernel<<<4096, 256, 0, stream>>>(out, n, seed, mean, stddev);
  return cudaGetLastError();
}

cudaError_t launch_fill_random_f32(float* out, int64_t n, uint64_t seed, float mean, float stddev, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  fill_kernel<<<4096, 256, 0, stream>>>(out, n, seed, mean, stddev);
  return cudaGetLastError();
}

}  // namespace zinfer::gpu::cuda
