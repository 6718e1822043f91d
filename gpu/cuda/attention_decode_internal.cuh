// Pieces of split-K decode attention shared between its .cu files (not part of attention.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/attention_device.cuh"
#include "gpu/cuda/programmatic_launch.cuh"

namespace zinfer::gpu::cuda {

// Tensor-core decode for head_dim D in {64, 128}, any GQA group, over a cache of CacheT (bf16 or
// __nv_fp8_e4m3; instantiated in attention_decode_mma_d64.cu / _d128.cu and their _fp8 twins).
template <int D, typename CacheT>
cudaError_t launch_decode_mma(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream);
// Split-K on CUDA cores, every supported head dim (attention_decode.cu: bf16,
// attention_decode_fp8.cu: e4m3).
template <typename CacheT>
cudaError_t launch_decode_splitk(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream);

// The splits that hold keys for a token attending num_keys keys: at least 64 keys each. Blocks of
// the splits past these have nothing to do (end_unused_split).
__device__ __forceinline__ int used_splits_of(int num_keys, int num_splits) {
  return min(num_splits, (num_keys + 63) / 64);
}

// A block of a split past the used ones waits for the kernel before it, and only then ends. Ending
// before the wait let the grid's blocks all start early (30 of 32 splits are unused at context 128), so
// the o projection's GEMV, launched as soon as they all have, moved onto the SMs while the qkv
// projection was still streaming, which slowed the decode step (docs/benchmarks/gpu.md).
__device__ __forceinline__ void end_unused_split() { wait_for_previous_kernel(); }

// At most this many splits per launch (the backend asks for up to 32): the merge keeps the
// splits' weights of a block's heads in shared memory.
inline constexpr int kMaxDecodeSplits = 64;
inline constexpr int kMaxMergeRows = 8;  // query heads per block, both decode kernels

// Called by every thread of a split's block once the block has written its partial results:
// counts the block in, and returns true in the one block that is the last of the used splits of
// its (token, head group) to finish, which then merges them. The barrier orders the block's
// writes before thread 0's fence and count (release, as a semaphore in CUTLASS does it); the last
// block resets the counter, so each launch leaves it at zero for the next (CUDA graph replays
// reuse the counters).
__device__ __forceinline__ bool last_split_to_finish(uint32_t* counter, int used_splits) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(counter, 1u) == static_cast<uint32_t>(used_splits - 1);
    if (last) *counter = 0;  // every used split has counted in: no other block touches it now
    __threadfence();
  }
  __syncthreads();
  return last;
}

// Merges the used splits' partial results of heads [h_base, h_base + rows) of token t (list index
// token_index) into kv.out with their log-sum-exp weights. Partials: index ((token_index *
// num_heads + head) * num_splits + split) * head_dim; a split without keys has m = -inf. Two
// rounds of L2 reads (.cg: other SMs wrote them, this SM's L1 must not answer with anything
// older): every (head, split)'s m and l at once, then each thread's four dims of every split.
__device__ __forceinline__ void merge_splits(const PagedKv& kv, const DecodeWork& work, int token_index, int t,
                                             int h_base, int rows, int head_dim, int used_splits) {
  __shared__ float s_m[kMaxMergeRows][kMaxDecodeSplits], s_l[kMaxMergeRows][kMaxDecodeSplits];
  __shared__ float s_lsum[kMaxMergeRows];
  auto part = [&](int g, int s) {
    return (static_cast<int64_t>(token_index) * kv.num_heads + h_base + g) * work.num_splits + s;
  };
  for (int i = threadIdx.x; i < rows * used_splits; i += blockDim.x) {
    const int g = i / used_splits, s = i % used_splits;
    const float2 ml = __ldcg(reinterpret_cast<const float2*>(work.partial_ml) + part(g, s));
    s_m[g][s] = ml.x;
    s_l[g][s] = ml.y;
  }
  __syncthreads();
  // One thread per head turns the maxima into weights (in split order, as a sequential merge).
  if (threadIdx.x < rows) {
    const int g = threadIdx.x;
    float m_max = -INFINITY;
    for (int s = 0; s < used_splits; ++s) m_max = fmaxf(m_max, s_m[g][s]);
    float lsum = 0.f;
    for (int s = 0; s < used_splits; ++s) {
      const float w = s_m[g][s] == -INFINITY ? 0.f : fast_exp2(s_m[g][s] - m_max);
      s_m[g][s] = w;
      lsum += s_l[g][s] * w;
    }
    s_lsum[g] = lsum;
  }
  __syncthreads();
  const int quads = head_dim / 4;
  for (int idx = threadIdx.x; idx < rows * quads; idx += blockDim.x) {
    const int g = idx / quads, d = (idx % quads) * 4;
    float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
    for (int s = 0; s < used_splits; ++s) {
      const float w = s_m[g][s];
      if (w == 0.f) continue;  // a split without keys (m = -inf) adds nothing
      const float4 v = __ldcg(reinterpret_cast<const float4*>(work.partial_acc + part(g, s) * head_dim + d));
      a.x += v.x * w;
      a.y += v.y * w;
      a.z += v.z * w;
      a.w += v.w * w;
    }
    const float lsum = s_lsum[g];
    __nv_bfloat16* out = kv.out + (static_cast<int64_t>(t) * kv.num_heads + h_base + g) * head_dim + d;
    // v_scale: an fp8 cache's V scale (1 for bf16, where the product changes nothing).
    out[0] = __float2bfloat16(a.x / lsum * kv.v_scale);
    out[1] = __float2bfloat16(a.y / lsum * kv.v_scale);
    out[2] = __float2bfloat16(a.z / lsum * kv.v_scale);
    out[3] = __float2bfloat16(a.w / lsum * kv.v_scale);
  }
}

}  // namespace zinfer::gpu::cuda
