// The FP8 mma kernel for up to 64 rows of x, 128-input chunks (fp8_mma_kernel.cuh).
#include "gpu/cuda/fp8/fp8_mma_launch.cuh"

namespace zinfer::gpu::cuda::fp8_detail {
Instance instance_mf8() { return Instance{launch_mf<8, 128>, resident_blocks<8, 128>}; }
}  // namespace zinfer::gpu::cuda::fp8_detail
