// Split-K flash decoding on CUDA cores for the head dims without a tensor-core kernel (64 and 128
// run attention_decode_mma.cuh), templated on the cache element; included by attention_decode.cu
// (bf16) and attention_decode_fp8.cu (e4m3), one instantiation set each.
// Block (token, kv head, head group, split): the block's 4 warps stride
// over the split's keys; within a warp, D/8 lanes share one key (8 elements each), so a warp holds
// 32/(D/8) keys at once, each lane group with its own online softmax for every query head of the
// group. Each key/value row is read once for all heads that share it. Head dims that are a
// multiple of 8 but not a power of two (e.g. 24) run in the next power-of-two kernel (32) with the
// lanes past the head dim idle: they load zeros, which add nothing to the dot products.
#pragma once

#include <cfloat>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/attention_decode_internal.cuh"
#include "gpu/cuda/attention_device.cuh"
#include "gpu/cuda/kv_cache_element.cuh"
#include "gpu/cuda/programmatic_launch.cuh"

namespace zinfer::gpu::cuda {
namespace decode_splitk {

constexpr int kWarps = 4;
constexpr int kUnroll = 4;     // keys per lane group loaded before the first is used
constexpr float kLog2e = 1.4426950408889634f;

__device__ inline void bf16x8_to_float(const uint4& raw, float* out) {
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// D: the kernel's (power-of-two) width; kv.head_dim <= D is the rows' real length and stride.
// CacheT: the cache element (kv_cache_element.cuh).
template <int D, int G, typename CacheT>
__global__ void __launch_bounds__(kWarps * 32) decode_kernel(PagedKv kv, DecodeWork work, int head_groups) {
  constexpr int kLanes = D / 8;        // lanes per key
  constexpr int kKeysPerWarp = 32 / kLanes;
  constexpr int kParts = kWarps * kKeysPerWarp;
  static_assert(G <= kMaxMergeRows, "the split merge holds a block's heads in shared memory");
  __shared__ float s_acc[kParts][G][D];
  __shared__ float s_m[kParts][G];
  __shared__ float s_l[kParts][G];

  // Launched programmatically (see programmatic_launch.cuh): the o projection's GEMV may start on
  // idle SMs. The step's arrays are read before the wait (the rotary kernel does not write them),
  // q and K/V after it.
  allow_next_kernel();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int grp = lane / kLanes, sub = lane % kLanes;
  const int hd = kv.head_dim;
  const bool lane_in_head = sub * 8 < hd;  // false only for the padding lanes of a narrow head
  const int t = work.tokens[blockIdx.x];
  const int group_size = kv.num_heads / kv.num_kv_heads;
  const int kvh = blockIdx.y / head_groups;
  const int h_base = kvh * group_size + (blockIdx.y % head_groups) * G;
  const int ctx = kv.positions[t] + 1;
  // Keys [first_key, ctx): the whole context, or its last sliding_window positions.
  const int first_key = kv.sliding_window > 0 ? max(0, ctx - kv.sliding_window) : 0;
  const int num_keys = ctx - first_key;
  const int* bt = kv.block_tables + kv.seq_block_offset[kv.token_seq[t]];
  const int split = blockIdx.z, num_splits = gridDim.z;
  // Short key ranges use fewer splits (at least 64 keys each); the blocks of the rest end here.
  const int used_splits = used_splits_of(num_keys, num_splits);
  if (split >= used_splits) {
    end_unused_split();
    return;
  }
  const int chunk = (num_keys + used_splits - 1) / used_splits;
  const int key_begin = first_key + split * chunk;
  const int key_end = min(ctx, key_begin + chunk);
  wait_for_previous_kernel();

  float q[G][8];
  // Scores in log2 units (exp2 is one instruction); an fp8 cache's k_scale folded in (1 for bf16).
  const float qscale = kv.scale * kLog2e * kv.k_scale;
  const CacheT* k_cache = k_cache_of<CacheT>(kv);
  const CacheT* v_cache = v_cache_of<CacheT>(kv);
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const uint4 raw = lane_in_head ? *reinterpret_cast<const uint4*>(
                                         kv.q + (static_cast<int64_t>(t) * kv.num_heads + h_base + g) * hd + sub * 8)
                                   : make_uint4(0, 0, 0, 0);
    bf16x8_to_float(raw, q[g]);
#pragma unroll
    for (int i = 0; i < 8; ++i) q[g][i] *= qscale;
  }
  float m[G], l[G], acc[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[g][i] = 0.f;
  }

  const int64_t row_stride = static_cast<int64_t>(kv.num_kv_heads) * hd;
  const int64_t head_offset = static_cast<int64_t>(kvh) * hd + sub * 8;
  constexpr int kStep = kWarps * kKeysPerWarp * kUnroll;
  // The loop bound is uniform across the warp so that every lane reaches the shuffles. Each lane
  // group loads kUnroll keys, scores them all, then folds them into its softmax state at once.
  for (int base = key_begin + warp * kKeysPerWarp * kUnroll; base < key_end; base += kStep) {
    Row8<CacheT> kraw[kUnroll], vraw[kUnroll];
    bool valid[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int key = base + u * kKeysPerWarp + grp;
      valid[u] = key < key_end;
      if (valid[u] && lane_in_head) {
        const int64_t slot = paged_slot(bt, key, kv.block_size);
        kraw[u].load(k_cache + slot * row_stride + head_offset);
        vraw[u].load(v_cache + slot * row_stride + head_offset);
      } else {
        kraw[u].zero();
        vraw[u].zero();
      }
    }
    float sc[kUnroll][G];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float kf[8];
      bf16x8_to_float(kraw[u].bf16x8(), kf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float d = 0.f;
#pragma unroll
        for (int i = 0; i < 8; ++i) d += q[g][i] * kf[i];
        sc[u][g] = d;
      }
    }
#pragma unroll
    for (int o = kLanes / 2; o > 0; o >>= 1) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int g = 0; g < G; ++g) sc[u][g] += __shfl_xor_sync(0xffffffffu, sc[u][g], o);
      }
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float mx = m[g];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (!valid[u]) sc[u][g] = -INFINITY;
        mx = fmaxf(mx, sc[u][g]);
      }
      const float m_use = mx == -INFINITY ? 0.f : mx;  // nothing valid yet: keep the state empty
      const float corr = fast_exp2(m[g] - m_use);
      m[g] = mx;
      l[g] *= corr;
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[g][i] *= corr;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        sc[u][g] = fast_exp2(sc[u][g] - m_use);
        l[g] += sc[u][g];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float vf[8];
      bf16x8_to_float(vraw[u].bf16x8(), vf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[g][i] += sc[u][g] * vf[i];
      }
    }
  }

  const int part = warp * kKeysPerWarp + grp;
#pragma unroll
  for (int g = 0; g < G; ++g) {
#pragma unroll
    for (int i = 0; i < 8; ++i) s_acc[part][g][sub * 8 + i] = acc[g][i];
    if (sub == 0) {
      s_m[part][g] = m[g];
      s_l[part][g] = l[g];
    }
  }
  __syncthreads();

  for (int idx = threadIdx.x; idx < G * D; idx += blockDim.x) {
    const int g = idx / D, d = idx % D;
    if (d >= hd) continue;  // padding columns (all zero)
    float m_max = -INFINITY;
    for (int p = 0; p < kParts; ++p) m_max = fmaxf(m_max, s_m[p][g]);
    float a = 0.f, lsum = 0.f;
    if (m_max != -INFINITY) {
      for (int p = 0; p < kParts; ++p) {
        const float w = fast_exp2(s_m[p][g] - m_max);
        a += s_acc[p][g][d] * w;
        lsum += s_l[p][g] * w;
      }
    }
    const int h = h_base + g;
    if (used_splits == 1) {
      kv.out[(static_cast<int64_t>(t) * kv.num_heads + h) * hd + d] = __float2bfloat16(a / lsum * kv.v_scale);
    } else {
      const int64_t part_index = (static_cast<int64_t>(blockIdx.x) * kv.num_heads + h) * num_splits + split;
      work.partial_acc[part_index * hd + d] = a;
      if (d == 0) {
        work.partial_ml[part_index * 2] = m_max;
        work.partial_ml[part_index * 2 + 1] = lsum;
      }
    }
  }
  if (used_splits > 1 && last_split_to_finish(&work.split_counters[blockIdx.x * gridDim.y + blockIdx.y], used_splits)) {
    merge_splits(kv, work, blockIdx.x, t, h_base, G, hd, used_splits);
  }
}

template <int D, int G, typename CacheT>
cudaError_t launch_for_group(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream) {
  const int head_groups = kv.num_heads / kv.num_kv_heads / G;
  const dim3 grid(work.num_tokens, kv.num_kv_heads * head_groups, work.num_splits);
  ProgrammaticLaunch launch(grid, dim3(kWarps * 32), 0, stream, /*programmatic=*/true);
  return cudaLaunchKernelEx(&launch.config, decode_kernel<D, G, CacheT>, kv, work, head_groups);
}

// Query heads per block: the largest of 8, 4, 2, 1 that divides the GQA group.
template <int D, typename CacheT>
cudaError_t launch_for_dim(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream) {
  const int group_size = kv.num_heads / kv.num_kv_heads;
  if (group_size % 8 == 0) return launch_for_group<D, 8, CacheT>(kv, work, stream);
  if (group_size % 4 == 0) return launch_for_group<D, 4, CacheT>(kv, work, stream);
  if (group_size % 2 == 0) return launch_for_group<D, 2, CacheT>(kv, work, stream);
  return launch_for_group<D, 1, CacheT>(kv, work, stream);
}

}  // namespace decode_splitk

template <typename CacheT>
cudaError_t launch_decode_splitk(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream) {
  using decode_splitk::launch_for_dim;
  if (kv.head_dim <= 16) return launch_for_dim<16, CacheT>(kv, work, stream);
  if (kv.head_dim <= 32) return launch_for_dim<32, CacheT>(kv, work, stream);
  if (kv.head_dim <= 64) return launch_for_dim<64, CacheT>(kv, work, stream);
  if (kv.head_dim <= 128) return launch_for_dim<128, CacheT>(kv, work, stream);
  return launch_for_dim<256, CacheT>(kv, work, stream);
}

}  // namespace zinfer::gpu::cuda
