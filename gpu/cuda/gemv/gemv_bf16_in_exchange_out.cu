// GEMV variant: attention output -> o projection, silu(gate) * up -> down projection of one rank of a tensor-parallel
// group, its partial sums into the residual exchange (residual_exchange.h).
#include "gpu/cuda/gemv/gemv_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

cudaError_t launch_bf16_in_exchange_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  return launch_variant<GemvInput::kBf16, GemvOutput::kExchange>(a, stream, programmatic_launch);
}

}  // namespace zinfer::gpu::cuda::gemv_detail
