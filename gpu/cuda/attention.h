// Paged attention over the KV cache, causal, with grouped-query heads. K and V of the tokens being
// attended are already in the cache (qkv_rope writes them first), so a prefill chunk with a cached
// prefix and a decode token are the same computation: token t attends keys [0, positions[t]], or
// with a sliding window W > 0 (Mistral; as transformers and the CPU backend apply it) only the last
// W of them, [max(0, positions[t] - W + 1), positions[t]].
//
// Layouts:
//   q, out:            [num_tokens, num_heads, head_dim] bf16 (token index = row of the step)
//   k_cache, v_cache:  [num_blocks, block_size, num_kv_heads, head_dim] bf16 (one layer), or with
//                      kv_cache_dtype fp8 k_cache8, v_cache8 in the same layout, e4m3fn codes read
//                      as code · k_scale (code · v_scale); every kernel takes both, templated on
//                      the cache element (each instantiation in its own .cu), and converts e4m3 to
//                      bf16 (exact) as it loads, the scales folded into the softmax scale and the
//                      output
//   block_tables:      int32, each sequence's physical blocks, at seq_block_offset[seq]
//   query head h reads kv head h / (num_heads / num_kv_heads).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

struct PagedKv {
  const __nv_bfloat16* q = nullptr;
  const __nv_bfloat16* k_cache = nullptr;
  const __nv_bfloat16* v_cache = nullptr;
  // An fp8 cache instead of k_cache / v_cache (those then null), with its layer's scales.
  const __nv_fp8_e4m3* k_cache8 = nullptr;
  const __nv_fp8_e4m3* v_cache8 = nullptr;
  float k_scale = 1.f;
  float v_scale = 1.f;
  __nv_bfloat16* out = nullptr;
  const int32_t* positions = nullptr;         // [num_tokens]
  const int32_t* token_seq = nullptr;         // [num_tokens]: the token's sequence in the step
  const int32_t* seq_block_offset = nullptr;  // [num_seqs]: start of its row in block_tables
  const int32_t* block_tables = nullptr;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_size = 16;
  float scale = 1.f;  // softmax scale, head_dim^-0.5
  int32_t sliding_window = 0;  // 0: no window; else keys within the last sliding_window positions
};

// Split-K decoding: each (token, kv head, split) block reads its share of the keys once for all
// the query heads of the group, and the last split of a (token, head group) to finish merges the
// splits' partial results (no second kernel: at batch 1 its launch and wait were a visible part of
// the attention's latency). Used for decode tokens and, for head dims without a tensor-core
// kernel, for every token. tokens: [num_tokens] row indices. The splits partition the keys the
// token attends (with a window, only the window's keys), at least 64 keys each, so short
// contexts use fewer splits than num_splits and the blocks of the others do no work (they end
// once the kernel before them has).
// Workspace (when num_splits > 1): partial_acc [num_tokens * num_heads * num_splits * head_dim]
// float, partial_ml [num_tokens * num_heads * num_splits * 2] float, split_counters
// [num_tokens * num_heads] zeroed once before the first launch (each launch leaves them zero).
// head_dim: a multiple of 8, 8 to 256 (non-powers of two run padded to the next power of two).
// Launched with programmatic stream serialization: the kernel reads tokens, positions, token_seq,
// seq_block_offset and block_tables before it waits for the kernels before it, so no kernel of
// the two launched just before it may write them (q, out and the cache's new rows are read after).
struct DecodeWork {
  const int32_t* tokens = nullptr;
  int32_t num_tokens = 0;
  int32_t num_splits = 1;
  float* partial_acc = nullptr;
  float* partial_ml = nullptr;
  uint32_t* split_counters = nullptr;
  // True when no key a listed token attends but its own position's is written in this step (each
  // listed token is the only token of its sequence in the step, as in decode steps). The kernel
  // may then read those keys before it waits for the kernel before it (the rotary kernel writing
  // this step's K/V), while that one and the one before it may still run.
  bool keys_before_query_cached = false;
};
bool decode_attention_supports(int32_t head_dim);
cudaError_t launch_decode_attention(const PagedKv& kv, const DecodeWork& work, cudaStream_t stream);

// Prefill attention over tiles of up to kPrefillTileQueries consecutive queries of one sequence.
// tiles: [num_tiles, 3] = (first token row, number of queries <= kPrefillTileQueries, seq).
// launch_prefill_attention picks the kernel:
//  - head_dim 128 with a power-of-two block_size in [4, 128]: the Hopper kernel (wgmma, four
//    producer warps filling a 3-stage K/V ring, 128 queries per block; attention_prefill_sm90.cu);
//  - otherwise (head_dim 64, other block sizes): mma.sync m16n8k16 FlashAttention-2 style, each
//    tile run as 64-query halves (attention_prefill.cu).
// The tile size is the one the step packer uses (cuda_backend sets StepCapacity::tile_queries).
constexpr int32_t kPrefillTileQueries = 128;
bool prefill_attention_supports(int32_t head_dim);
cudaError_t launch_prefill_attention(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                     cudaStream_t stream);
// The two kernels by name (tests and benchmarks compare them).
bool prefill_attention_sm90_supports(const PagedKv& kv);
cudaError_t launch_prefill_attention_sm90(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                          cudaStream_t stream);
cudaError_t launch_prefill_attention_mma(const PagedKv& kv, const int32_t* tiles, int32_t num_tiles,
                                         cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
