// The FP8 mma kernel for up to 8 rows of x, 256-input chunks (fp8_mma_kernel.cuh).
#include "gpu/cuda/fp8/fp8_mma_launch.cuh"

namespace zinfer::gpu::cuda::fp8_detail {
Instance instance_mf1() { return Instance{launch_mf<1, 256>, resident_blocks<1, 256>}; }
}  // namespace zinfer::gpu::cuda::fp8_detail
