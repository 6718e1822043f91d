// The Hopper prefill kernel's entry points (attention_prefill_sm90_kernel.cuh) and its bf16-cache
// instantiation; attention_prefill_sm90_fp8.cu holds the e4m3 one.
#include "gpu/cuda/attention_prefill_sm90_kernel.cuh"

namespace zinfer::gpu::cuda {

template cudaError_t launch_prefill_sm90<__nv_bfloat16>(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                                        cudaStream_t stream);
extern template cudaError_t launch_prefill_sm90<__nv_fp8_e4m3>(const PagedKv& kv, const int32_t* tiles,
                                                               int32_t num_tiles, cudaStream_t stream);

bool prefill_attention_sm90_supports(const PagedKv& kv) {
  const int bs = kv.block_size;
  return kv.head_dim == prefill_sm90::kD && bs >= 4 && bs <= prefill_sm90::kTileN && (bs & (bs - 1)) == 0;
}

cudaError_t launch_prefill_attention_sm90(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                          cudaStream_t stream) {
  if (num_tiles == 0) return cudaSuccess;
  if (!prefill_attention_sm90_supports(kv) || kv.num_kv_heads <= 0 || kv.num_heads % kv.num_kv_heads != 0) {
    return cudaErrorInvalidValue;
  }
  const bool fp8 = kv.k_cache8 != nullptr;
  if (fp8 != (kv.v_cache8 != nullptr) || fp8 == (kv.k_cache != nullptr) || fp8 == (kv.v_cache != nullptr))
    return cudaErrorInvalidValue;  // exactly one cache pair
  return fp8 ? launch_prefill_sm90<__nv_fp8_e4m3>(kv, tiles, num_tiles, stream)
             : launch_prefill_sm90<__nv_bfloat16>(kv, tiles, num_tiles, stream);
}

}  // namespace zinfer::gpu::cuda
