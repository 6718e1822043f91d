// A bias added to every row of the float32 residual stream: the o projection's bias of Llama
// and Qwen3 checkpoints with attention_bias (the GEMV and cuBLASLt paths add x · Wᵀ into the
// residual without a bias term).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// residual[t, i] += bias[i] for t < num_rows, i < width (float32 both).
cudaError_t launch_bias_add(float* residual, const float* bias, int32_t num_rows, int32_t width, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
