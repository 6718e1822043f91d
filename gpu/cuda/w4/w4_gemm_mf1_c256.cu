// The W4A16 kernel for up to 8 rows of x, 256-input chunks (w4_gemm_kernel.cuh).
#include "gpu/cuda/w4/w4_launch.cuh"

namespace zinfer::gpu::cuda::w4_detail {
Instance instance_mf1_c256() { return Instance{launch_mf<1, 256>, resident_blocks<1, 256>}; }
}  // namespace zinfer::gpu::cuda::w4_detail
