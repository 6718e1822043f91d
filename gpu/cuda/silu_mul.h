// The gated MLP's activation: out = silu(gate) * up.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// gate_up: [num_rows, 2 * inter] bf16, the fused gate/up projection (gate in columns
// [0, inter), up in [inter, 2 * inter)); out: [num_rows, inter] bf16. Computed in float32.
cudaError_t launch_silu_mul(const __nv_bfloat16* gate_up, __nv_bfloat16* out, int32_t num_rows,
                            int32_t inter, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
