// GEMV variant: RMSNorm of the residual -> gate_up projection -> silu(gate) * up.
#include "gpu/cuda/gemv/gemv_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

cudaError_t launch_norm_in_silu_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  return launch_variant<GemvInput::kRmsNorm, GemvOutput::kSiluMul>(a, stream, programmatic_launch);
}

}  // namespace zinfer::gpu::cuda::gemv_detail
