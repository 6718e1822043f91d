// After the fused QKV projection: bias add (Qwen2), per-head RMSNorm of q and k (Qwen3), rotary
// embedding (Hugging Face rotate_half convention: dims i and i + head_dim/2 form a pair with
// frequency inv_freq[i]), then q out and k/v written into the paged cache. One kernel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

struct QkvRopeParams {
  const __nv_bfloat16* qkv = nullptr;   // [num_tokens, (num_heads + 2 * num_kv_heads) * head_dim]
  const float* bias = nullptr;          // [(num_heads + 2 * num_kv_heads) * head_dim] or null
  const float* q_norm = nullptr;        // [head_dim] or null (Qwen3)
  const float* k_norm = nullptr;        // [head_dim] or null
  const float* inv_freq = nullptr;      // [head_dim / 2], scaling already applied
  const int32_t* positions = nullptr;   // [num_tokens]
  const int32_t* slot_mapping = nullptr;  // [num_tokens]: block * block_size + offset in block
  __nv_bfloat16* q_out = nullptr;       // [num_tokens, num_heads, head_dim]
  // One layer's cache, each [num_blocks, block_size, num_kv_heads, head_dim]; a slot is one
  // (block, offset) row of num_kv_heads * head_dim elements.
  // bf16, or (kv_cache_dtype fp8) e4m3fn codes of x / k_scale and x / v_scale (IEEE division, round
  // to nearest even, saturating at ±448, as gpu/quant/fp8.h): one pair set, the other null.
  __nv_bfloat16* k_cache = nullptr;
  __nv_bfloat16* v_cache = nullptr;
  __nv_fp8_e4m3* k_cache8 = nullptr;
  __nv_fp8_e4m3* v_cache8 = nullptr;
  float k_scale = 1.f;
  float v_scale = 1.f;
  int32_t num_tokens = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;   // even, <= 512
  float norm_eps = 1e-6f;
};

// Launched with programmatic stream serialization: positions, slot_mapping and inv_freq are read
// before the kernel waits for the one before it, so that one must not write them.
cudaError_t launch_qkv_rope(const QkvRopeParams& p, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
