// RMSNorm of the float32 residual stream into the bf16 input of the next GEMM. (The residual
// add it once fused is gone: the o and down projections add into the residual themselves,
// cuda_forward.cpp.)
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// For each row t of [num_rows, hidden]:
//   out[t] = residual[t] * rsqrt(mean(residual[t]^2) + eps) * weight   (out bf16)
// residual: float32, weight: [hidden] float32. With rows (optional, [num_rows]): output row r is
// computed from residual row rows[r] (the final norm of only the rows that are sampled).
cudaError_t launch_rmsnorm(const float* residual, const float* weight, __nv_bfloat16* out, int32_t num_rows,
                           int32_t hidden, float eps, cudaStream_t stream, const int32_t* rows = nullptr);

}  // namespace zinfer::gpu::cuda
