// The W4A16 decode kernel for up to 8 rows of x (w4_decode_kernel.cuh).
#include "gpu/cuda/w4/w4_decode_launch.cuh"

namespace zinfer::gpu::cuda::w4_decode {
cudaError_t launch_mf1(const Params& p, dim3 grid, cudaStream_t stream) { return launch<1>(p, grid, stream); }
}  // namespace zinfer::gpu::cuda::w4_decode
