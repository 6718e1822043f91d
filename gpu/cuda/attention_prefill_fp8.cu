// mma.sync prefill attention over an fp8 (e4m3) KV cache, head dims 64 and 128 (one heavy
// instantiation set per file; the bf16 one is in attention_prefill.cu).
#include "gpu/cuda/attention_prefill_mma.cuh"

namespace zinfer::gpu::cuda {
template cudaError_t launch_prefill_mma<__nv_fp8_e4m3>(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                                       cudaStream_t stream);
}  // namespace zinfer::gpu::cuda
