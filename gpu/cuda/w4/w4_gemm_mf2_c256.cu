// The W4A16 kernel for up to 16 rows of x, 256-input chunks (w4_gemm_kernel.cuh).
#include "gpu/cuda/w4/w4_launch.cuh"

namespace zinfer::gpu::cuda::w4_detail {
Instance instance_mf2_c256() { return Instance{launch_mf<2, 256>, resident_blocks<2, 256>}; }
}  // namespace zinfer::gpu::cuda::w4_detail
