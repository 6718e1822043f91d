// Split-K decode attention over an fp8 (e4m3) KV cache, every head dim (one heavy instantiation
// set per file; the bf16 one is in attention_decode.cu).
#include "gpu/cuda/attention_decode_splitk.cuh"

namespace zinfer::gpu::cuda {
template cudaError_t launch_decode_splitk<__nv_fp8_e4m3>(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream);
}  // namespace zinfer::gpu::cuda
