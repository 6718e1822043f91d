// GEMV variant: attention output -> o projection, silu(gate) * up -> down projection, each added into the float32 residual.
#include "gpu/cuda/gemv/gemv_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

cudaError_t launch_bf16_in_residual_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  return launch_variant<GemvInput::kBf16, GemvOutput::kAddToResidual>(a, stream, programmatic_launch);
}

}  // namespace zinfer::gpu::cuda::gemv_detail
