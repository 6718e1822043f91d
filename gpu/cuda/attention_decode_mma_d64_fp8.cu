// Tensor-core decode attention, head_dim 64, fp8 (e4m3) cache (one heavy instantiation per file).
#include "gpu/cuda/attention_decode_mma.cuh"

namespace zinfer::gpu::cuda {
template cudaError_t launch_decode_mma<64, __nv_fp8_e4m3>(const PagedKv& kv, const DecodeWork& work,
                                                          cudaStream_t stream);
}  // namespace zinfer::gpu::cuda
