// The entry point of decode attention, which picks the kernel: tensor cores for head dims 64 and
// 128 (attention_decode_mma.cuh), else split-K on CUDA cores (attention_decode_splitk.cuh); this
// file holds the split-K kernels for a bf16 cache, attention_decode_fp8.cu those for e4m3.
#include "gpu/cuda/attention_decode_splitk.cuh"

namespace zinfer::gpu::cuda {

template cudaError_t launch_decode_splitk<__nv_bfloat16>(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream);
extern template cudaError_t launch_decode_splitk<__nv_fp8_e4m3>(const PagedKv& kv, const DecodeWork& work,
                                                                cudaStream_t stream);

bool decode_attention_supports(int32_t head_dim) { return head_dim >= 8 && head_dim <= 256 && head_dim % 8 == 0; }

cudaError_t launch_decode_attention(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream) {
  if (work.num_tokens == 0) return cudaSuccess;
  if (work.num_splits < 1 || kv.num_kv_heads <= 0 || kv.num_heads % kv.num_kv_heads != 0) {
    return cudaErrorInvalidValue;
  }
  if (work.num_splits > 1 && (work.num_splits > kMaxDecodeSplits || work.partial_acc == nullptr ||
                              work.partial_ml == nullptr || work.split_counters == nullptr)) {
    return cudaErrorInvalidValue;
  }
  if (!decode_attention_supports(kv.head_dim)) return cudaErrorInvalidValue;
  const bool fp8 = kv.k_cache8 != nullptr;
  if (fp8 != (kv.v_cache8 != nullptr) || fp8 == (kv.k_cache != nullptr) || fp8 == (kv.v_cache != nullptr))
    return cudaErrorInvalidValue;  // exactly one cache pair
  // Tensor cores where there is a kernel for the head dim; else the narrowest CUDA-core kernel
  // that holds the head (8-element lane chunks, a power of two of them).
  if (fp8) {
    if (kv.head_dim == 64) return launch_decode_mma<64, __nv_fp8_e4m3>(kv, work, stream);
    if (kv.head_dim == 128) return launch_decode_mma<128, __nv_fp8_e4m3>(kv, work, stream);
    return launch_decode_splitk<__nv_fp8_e4m3>(kv, work, stream);
  }
  if (kv.head_dim == 64) return launch_decode_mma<64, __nv_bfloat16>(kv, work, stream);
  if (kv.head_dim == 128) return launch_decode_mma<128, __nv_bfloat16>(kv, work, stream);
  return launch_decode_splitk<__nv_bfloat16>(kv, work, stream);
}

}  // namespace zinfer::gpu::cuda
