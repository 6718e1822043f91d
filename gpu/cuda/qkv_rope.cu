#include "gpu/cuda/qkv_rope.h"

#include <algorithm>
#include <cstdint>

#include "gpu/cuda/programmatic_launch.cuh"
#include "gpu/cuda/resident_blocks.h"

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

// Steps of many tokens (prefill): blocks of kRowWarps warps, as many as the GPU holds at once,
// each walking tokens a grid apart. A warp owns a run of kRowHeads heads of the token and holds
// their bytes (bf16 pairs, 4 bytes a lane) while it fetches the next token's, and the block
// computes the next token's angles into the other half of its angle buffer, so that HBM always
// has a token's loads in flight; a block per token (the kernel above) waited for each token's
// loads in turn and ran at 0.4 of the copy rate on a 4,096-token prefill. Head dims that are
// multiples of 4 up to 256: a lane holds PAIRS pairs of each half head (1 up to 128, 2 up to 256).
// The arithmetic and roundings are the kernel above's, written out again: helpers shared by the
// two kernels (a head's destination, its norm factor, a rotated pair) made this one 15 % slower
// (46 against 40 µs at 4,096 tokens, one H200).
constexpr int kRowWarps = 8;
constexpr int kRowHeads = 6;

template <int PAIRS>
__global__ void __launch_bounds__(kRowWarps * 32) qkv_rope_rows_kernel(QkvRopeParams p) {
  __shared__ float cos_of[2][PAIRS * 64], sin_of[2][PAIRS * 64];
  allow_next_kernel();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int D = p.head_dim, half = D / 2, T = p.num_tokens;
  const int total_heads = p.num_heads + 2 * p.num_kv_heads;
  auto angles = [&](int t, int buf) {
    const float pos = static_cast<float>(p.positions[t]);
    for (int i = threadIdx.x; i < half; i += blockDim.x) sincosf(pos * p.inv_freq[i], &sin_of[buf][i], &cos_of[buf][i]);
  };
  using Pairs = uint32_t[kRowHeads][PAIRS][2];  // [head][pair][lo, hi half]: two bf16 each
  auto fetch = [&](int t, int h0, Pairs& raw) {
    const int64_t row = static_cast<int64_t>(t) * total_heads * D;
#pragma unroll
    for (int b = 0; b < kRowHeads; ++b)
#pragma unroll
      for (int r = 0; r < PAIRS; ++r) {
        const int h = h0 + b, i = 2 * lane + 64 * r;
        if (h >= total_heads || i >= half) continue;
        const auto* head = reinterpret_cast<const uint32_t*>(p.qkv + row + static_cast<int64_t>(h) * D);
        raw[b][r][0] = head[i / 2];
        raw[b][r][1] = head[(i + half) / 2];
      }
  };
  if (blockIdx.x < T) angles(blockIdx.x, 0);
  __syncthreads();
  wait_for_previous_kernel();
  Pairs raw, next;
  const int h0 = warp * kRowHeads;  // total_heads ≤ kRowWarps · kRowHeads (the launch checks)
  if (blockIdx.x < T) fetch(blockIdx.x, h0, raw);
  int buf = 0;
  for (int t = blockIdx.x; t < T; t += gridDim.x, buf ^= 1) {
    const int tn = t + gridDim.x;
    if (tn < T) fetch(tn, h0, next);
    const int64_t slot = p.slot_mapping[t];
#pragma unroll
    for (int b = 0; b < kRowHeads; ++b) {
      const int h = h0 + b;
      if (h >= total_heads) break;
      const bool is_q = h < p.num_heads;
      const bool is_v = h >= p.num_heads + p.num_kv_heads;
      float2 lo[PAIRS], hi[PAIRS];
#pragma unroll
      for (int r = 0; r < PAIRS; ++r) {
        const int i = 2 * lane + 64 * r;
        if (i >= half) continue;
        lo[r] = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[b][r][0]));
        hi[r] = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw[b][r][1]));
        if (p.bias != nullptr) {
          const float* bias = p.bias + h * D;
          lo[r].x += bias[i], lo[r].y += bias[i + 1];
          hi[r].x += bias[i + half], hi[r].y += bias[i + half + 1];
        }
      }
      if (is_v) {
        const int64_t at = (slot * p.num_kv_heads + (h - p.num_heads - p.num_kv_heads)) * D;
#pragma unroll
        for (int r = 0; r < PAIRS; ++r) {
          const int i = 2 * lane + 64 * r;
          if (i >= half) continue;
          if (p.v_cache8 != nullptr) {
            p.v_cache8[at + i] = to_e4m3(lo[r].x, p.v_scale);
            p.v_cache8[at + i + 1] = to_e4m3(lo[r].y, p.v_scale);
            p.v_cache8[at + i + half] = to_e4m3(hi[r].x, p.v_scale);
            p.v_cache8[at + i + half + 1] = to_e4m3(hi[r].y, p.v_scale);
          } else {
            auto* v = reinterpret_cast<__nv_bfloat162*>(p.v_cache + at);
            v[i / 2] = __floats2bfloat162_rn(lo[r].x, lo[r].y);
            v[(i + half) / 2] = __floats2bfloat162_rn(hi[r].x, hi[r].y);
          }
        }
        continue;
      }
      const float* norm_w = is_q ? p.q_norm : p.k_norm;
      float scale = 1.f;
      if (norm_w != nullptr) {
        float sum_sq = 0.f;
#pragma unroll
        for (int r = 0; r < PAIRS; ++r)
          if (2 * lane + 64 * r < half)
            sum_sq += lo[r].x * lo[r].x + lo[r].y * lo[r].y + hi[r].x * hi[r].x + hi[r].y * hi[r].y;
        for (int o = 16; o > 0; o >>= 1) sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, o);
        scale = rsqrtf(sum_sq / static_cast<float>(D) + p.norm_eps);
      }
      const int64_t k_at = (slot * p.num_kv_heads + (h - p.num_heads)) * D;
      const bool k_fp8 = !is_q && p.k_cache8 != nullptr;
      __nv_bfloat16* dst = is_q ? p.q_out + (static_cast<int64_t>(t) * p.num_heads + h) * D
                          : k_fp8 ? nullptr
                                  : p.k_cache + k_at;
#pragma unroll
      for (int r = 0; r < PAIRS; ++r) {
        const int i = 2 * lane + 64 * r;
        if (i >= half) continue;
        float out_lo[2], out_hi[2];
        const float x1s[2] = {lo[r].x, lo[r].y}, x2s[2] = {hi[r].x, hi[r].y};
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          float x1 = x1s[j] * scale, x2 = x2s[j] * scale;
          if (norm_w != nullptr) {
            x1 *= norm_w[i + j];
            x2 *= norm_w[i + j + half];
          }
          const float cs = cos_of[buf][i + j], sn = sin_of[buf][i + j];
          out_lo[j] = x1 * cs - x2 * sn;
          out_hi[j] = x2 * cs + x1 * sn;
        }
        if (k_fp8) {
          p.k_cache8[k_at + i] = to_e4m3(out_lo[0], p.k_scale);
          p.k_cache8[k_at + i + 1] = to_e4m3(out_lo[1], p.k_scale);
          p.k_cache8[k_at + i + half] = to_e4m3(out_hi[0], p.k_scale);
          p.k_cache8[k_at + i + half + 1] = to_e4m3(out_hi[1], p.k_scale);
        } else {
          reinterpret_cast<__nv_bfloat162*>(dst)[i / 2] = __floats2bfloat162_rn(out_lo[0], out_lo[1]);
          reinterpret_cast<__nv_bfloat162*>(dst)[(i + half) / 2] = __floats2bfloat162_rn(out_hi[0], out_hi[1]);
        }
      }
    }
    // The next token's angles go to the other buffer (read last in the iteration before this
    // one, which the barrier below ended for every warp); the barrier makes them visible.
    if (tn < T) angles(tn, buf ^ 1);
    __syncthreads();
#pragma unroll
    for (int b = 0; b < kRowHeads; ++b)
#pragma unroll
      for (int r = 0; r < PAIRS; ++r) raw[b][r][0] = next[b][r][0], raw[b][r][1] = next[b][r][1];
  }
}

bool aligned4(const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; }

template <int PAIRS>
cudaError_t launch_rows(const QkvRopeParams& p, cudaStream_t stream) {
  auto kernel = qkv_rope_rows_kernel<PAIRS>;
  static const int resident = resident_blocks(kernel, kRowWarps * 32);
  const int blocks = std::max(1, std::min(p.num_tokens, resident));
  ProgrammaticLaunch launch(dim3(blocks), dim3(kRowWarps * 32), 0, stream, /*programmatic=*/true);
  return cudaLaunchKernelEx(&launch.config, kernel, p);
}

}  // namespace

cudaError_t launch_qkv_rope(const QkvRopeParams& p, cudaStream_t stream) {
  if (p.num_tokens == 0) return cudaSuccess;
  if (p.head_dim > kMaxHeadDim || p.head_dim % 2 != 0) return cudaErrorInvalidValue;
  const int total_heads = p.num_heads + 2 * p.num_kv_heads;
  if (p.num_tokens >= 64 && p.head_dim % 4 == 0 && p.head_dim <= 256 && total_heads <= kRowWarps * kRowHeads &&
      aligned4(p.qkv) && aligned4(p.q_out) && aligned4(p.k_cache) && aligned4(p.v_cache))
    return p.head_dim <= 128 ? launch_rows<1>(p, stream) : launch_rows<2>(p, stream);
  // Small steps: one warp per head. Large steps: enough blocks from the tokens alone.
  const int head_blocks = p.num_tokens >= 64 ? 1 : (total_heads + kWarps - 1) / kWarps;
  ProgrammaticLaunch launch(dim3(p.num_tokens, head_blocks), dim3(kWarps * 32), 0, stream, /*programmatic=*/true);
  return cudaLaunchKernelEx(&launch.config, qkv_rope_kernel, p);
}

}  // namespace zinfer::gpu::cuda
