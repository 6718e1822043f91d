// Seeded random device data, for benchmarks that need a model's shapes but not its values.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// out[i] = mean + stddev * (uniform(-sqrt3, sqrt3) from (seed, i)): unit variance, never all zeros.
cudaError_t launch_fill_random_bf16(__nv_bfloat16* out, int64_t n, uint64_t seed, float mean, float stddev,
                                    cudaStream_t stream);
cudaError_t launch_fill_random_f32(float* out, int64_t n, uint64_t seed, float mean, float stddev, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
