// The W4A16 kernel for up to 16 rows of x (w4_gemm_kernel.cuh).
#include "gpu/cuda/w4/w4_launch.cuh"

namespace zinfer::gpu::cuda::w4_detail {
cudaError_t launch_mf2(const Params& p, dim3 grid, cudaStream_t stream) { return launch_mf<2>(p, grid, stream); }
}  // namespace zinfer::gpu::cuda::w4_detail
