// GEMV variant: x as given, bf16 output (plain linear; tests and benchmarks).
#include "gpu/cuda/gemv/gemv_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

cudaError_t launch_bf16_in_bf16_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  return launch_variant<GemvInput::kBf16, GemvOutput::kBf16>(a, stream, programmatic_launch);
}

}  // namespace zinfer::gpu::cuda::gemv_detail
