// The FP8 mma kernel for up to 16 rows of x, 256-input chunks (fp8_mma_kernel.cuh).
#include "gpu/cuda/fp8/fp8_mma_launch.cuh"

namespace zinfer::gpu::cuda::fp8_detail {
Instance instance_mf2() { return Instance{launch_mf<2, 256>, resident_blocks<2, 256>}; }
}  // namespace zinfer::gpu::cuda::fp8_detail
