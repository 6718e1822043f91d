// Prefill attention: the dispatch between the Hopper kernel (attention_prefill_sm90.cu) and the
// mma.sync kernel (attention_prefill_mma.cuh), whose bf16-cache instantiation this file holds
// (attention_prefill_fp8.cu holds the e4m3 one).
#include "gpu/cuda/attention_prefill_mma.cuh"

namespace zinfer::gpu::cuda {

template cudaError_t launch_prefill_mma<__nv_bfloat16>(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                                       cudaStream_t stream);
extern template cudaError_t launch_prefill_mma<__nv_fp8_e4m3>(const PagedKv& kv, const int32_t* tiles,
                                                              int32_t num_tiles, cudaStream_t stream);

bool prefill_attention_supports(int32_t head_dim) { return head_dim == 64 || head_dim == 128; }

cudaError_t launch_prefill_attention(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                     cudaStream_t stream) {
  if (prefill_attention_sm90_supports(kv)) return launch_prefill_attention_sm90(kv, tiles, num_tiles, stream);
  return launch_prefill_attention_mma(kv, tiles, num_tiles, stream);
}

cudaError_t launch_prefill_attention_mma(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                         cudaStream_t stream) {
  if (num_tiles == 0) return cudaSuccess;
  if (kv.num_kv_heads <= 0 || kv.num_heads % kv.num_kv_heads != 0) return cudaErrorInvalidValue;
  const bool fp8 = kv.k_cache8 != nullptr;
  if (fp8 != (kv.v_cache8 != nullptr) || fp8 == (kv.k_cache != nullptr) || fp8 == (kv.v_cache != nullptr))
    return cudaErrorInvalidValue;  // exactly one cache pair
  return fp8 ? launch_prefill_mma<__nv_fp8_e4m3>(kv, tiles, num_tiles, stream)
             : launch_prefill_mma<__nv_bfloat16>(kv, tiles, num_tiles, stream);
}

}  // namespace zinfer::gpu::cuda
