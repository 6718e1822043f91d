// The Hopper prefill kernel over an fp8 (e4m3) KV cache (one heavy instantiation per file; the
// bf16 one and the entry points are in attention_prefill_sm90.cu).
#include "gpu/cuda/attention_prefill_sm90_kernel.cuh"

namespace zinfer::gpu::cuda {
template cudaError_t launch_prefill_sm90<__nv_fp8_e4m3>(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                                        cudaStream_t stream);
}  // namespace zinfer::gpu::cuda
