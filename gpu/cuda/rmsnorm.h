// RMSNorm fused with the residual add. The residual stream is kept in float32 (more accurate than
// a bf16 stream, and it costs one pass); the normalised output is bf16 for the next GEMM.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// For each row t of [num_rows, hidden]:
//   if delta: residual[t] += delta[t]            (delta bf16, residual float32, in place)
//   out[t] = residual[t] * rsqrt(mean(residual[t]^2) + eps) * weight   (out bf16)
// weight: [hidden] float32. With rows (optional, [num_rows]): output row r is computed from
// residual/delta row rows[r] (the final norm of only the rows that are sampled).
cudaError_t launch_add_rmsnorm(float* residual, const __nv_bfloat16* delta, const float* weight,
                               __nv_bfloat16* out, int32_t num_rows, int32_t hidden, float eps,
                               cudaStream_t stream, const int32_t* rows = nullptr);

}  // namespace zinfer::gpu::cuda
