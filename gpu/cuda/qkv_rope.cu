#include "gpu/cuda/qkv_rope.h"

#include "gpu/cuda/programmatic_launch.cuh"

namespace zinfer::gpu::cuda {
namespace {

__device__ __forceinline__ __nv_fp8_e4m3 to_e4m3(float x, float scale) {
  __nv_fp8_e4m3 c;
  c.__x = __nv_cvt_float_to_fp8(__fdiv_rn(x, scale), __NV_SATFINITE, __NV_E4M3);
  return c;
}

constexpr int kWarps = 4;
constexpr int kMaxHeadDim = 512;

// One block per token; each warp takes whole heads. The head's values are staged in shared memory
// in float32 so the norm and the rotation read them once.
__global__ void __launch_bounds__(kWarps * 32) qkv_rope_kernel(QkvRopeParams p) {
  __shared__ float stage[kWarps][kMaxHeadDim];
  __shared__ float cos_of[kMaxHeadDim / 2], sin_of[kMaxHeadDim / 2];
  // Launched programmatically: the block may be resident before the qkv projection has ended.
  // Until the wait it does what needs nothing the projection writes: the token's position and
  // cache slot, and the rotation's cos and sin (every head of the token shares them), so that
  // after the wait only the qkv row is read (at batch 1 this kernel is on the critical path).
  allow_next_kernel();
  const int t = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // blockIdx.y picks a group of kWarps heads, one per warp: a decode step of a few tokens still
  // spreads its heads over many blocks.
  const int D = p.head_dim, half = D / 2;
  const int total_heads = p.num_heads + 2 * p.num_kv_heads;
  const int64_t row = static_cast<int64_t>(t) * total_heads * D;
  const float pos = static_cast<float>(p.positions[t]);
  const int64_t slot = p.slot_mapping[t];
  // Same float32 arithmetic as transformers: angle = position * inv_freq, full-precision sincos.
  for (int i = threadIdx.x; i < half; i += blockDim.x) sincosf(pos * p.inv_freq[i], &sin_of[i], &cos_of[i]);
  __syncthreads();
  wait_for_previous_kernel();
  float* s = stage[warp];
  for (int h = blockIdx.y * kWarps + warp; h < total_heads; h += kWarps * gridDim.y) {
    const bool is_q = h < p.num_heads;
    const bool is_v = h >= p.num_heads + p.num_kv_heads;
    float sum_sq = 0.f;
    for (int i = lane; i < D; i += 32) {
      float v = __bfloat162float(p.qkv[row + h * D + i]);
      if (p.bias != nullptr) v += p.bias[h * D + i];
      s[i] = v;
      sum_sq += v * v;
    }
    __syncwarp();
    if (is_v) {
      const int64_t at = (slot * p.num_kv_heads + (h - p.num_heads - p.num_kv_heads)) * D;
      if (p.v_cache8 != nullptr) {
        for (int i = lane; i < D; i += 32) p.v_cache8[at + i] = to_e4m3(s[i], p.v_scale);
      } else {
        for (int i = lane; i < D; i += 32) p.v_cache[at + i] = __float2bfloat16(s[i]);
      }
      __syncwarp();
      continue;
    }
    const float* norm_w = is_q ? p.q_norm : p.k_norm;
    float scale = 1.f;
    if (norm_w != nullptr) {
      for (int o = 16; o > 0; o >>= 1) sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, o);
      scale = rsqrtf(sum_sq / static_cast<float>(D) + p.norm_eps);
    }
    const int64_t k_at = (slot * p.num_kv_heads + (h - p.num_heads)) * D;
    const bool k_fp8 = !is_q && p.k_cache8 != nullptr;
    __nv_bfloat16* dst = is_q ? p.q_out + (static_cast<int64_t>(t) * p.num_heads + h) * D
                        : k_fp8 ? nullptr
                                : p.k_cache + k_at;
    for (int i = lane; i < half; i += 32) {
      float x1 = s[i] * scale, x2 = s[i + half] * scale;
      if (norm_w != nullptr) {
        x1 *= norm_w[i];
        x2 *= norm_w[i + half];
      }
      const float cs = cos_of[i], sn = sin_of[i];
      const float lo = x1 * cs - x2 * sn, hi = x2 * cs + x1 * sn;
      if (k_fp8) {
        p.k_cache8[k_at + i] = to_e4m3(lo, p.k_scale);
        p.k_cache8[k_at + i + half] = to_e4m3(hi, p.k_scale);
      } else {
        dst[i] = __float2bfloat16(lo);
        dst[i + half] = __float2bfloat16(hi);
      }
    }
    __syncwarp();
  }
}

}  // namespace

cudaError_t launch_qkv_rope(const QkvRopeParams& p, cudaStream_t stream) {
  if (p.num_tokens == 0) return cudaSuccess;
  if (p.head_dim > kMaxHeadDim || p.head_dim % 2 != 0) return cudaErrorInvalidValue;
  const int total_heads = p.num_heads + 2 * p.num_kv_heads;
  // Small steps: one warp per head. Large steps: enough blocks from the tokens alone.
  const int head_blocks = p.num_tokens >= 64 ? 1 : (total_heads + kWarps - 1) / kWarps;
  ProgrammaticLaunch launch(dim3(p.num_tokens, head_blocks), dim3(kWarps * 32), 0, stream, /*programmatic=*/true);
  return cudaLaunchKernelEx(&launch.config, qkv_rope_kernel, p);
}

}  // namespace zinfer::gpu::cuda
