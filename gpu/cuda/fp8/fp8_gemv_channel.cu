// The FP8 GEMV for layers of one scale group per row (fp8_gemv_kernel.cuh).
#include "gpu/cuda/fp8/fp8_gemv_launch.cuh"

namespace zinfer::gpu::cuda::fp8_gemv_detail {
template cudaError_t launch<false>(const Params& p, int blocks, size_t smem, cudaStream_t stream);
}  // namespace zinfer::gpu::cuda::fp8_gemv_detail
