// The W4A16 GEMM of many rows with 256-row tiles of x (w4_wide_kernel.cuh).
#include "gpu/cuda/w4/w4_wide_launch.cuh"

namespace zinfer::gpu::cuda::w4_wide {
cudaError_t launch_t256(const Params& p, dim3 grid, cudaStream_t stream) { return launch_tile<256>(p, grid, stream); }
}  // namespace zinfer::gpu::cuda::w4_wide
