// GEMV variant: RMSNorm of the residual -> qkv projection.
#include "gpu/cuda/gemv/gemv_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

cudaError_t launch_norm_in_bf16_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  return launch_variant<GemvInput::kRmsNorm, GemvOutput::kBf16>(a, stream, programmatic_launch);
}

}  // namespace zinfer::gpu::cuda::gemv_detail
