// The CPU ops layer: float32 kernels over raw row-major arrays, the building blocks of the model
// definition (gpu/cpu/model.cpp). Shapes are given as [rows, cols]; "T" is the number of tokens of
// the flattened batch. Work is split over OpenMP threads where it is large enough to pay for it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zinfer::gpu::cpu {

// y[M, N] = x[M, K] · w[N, K]^T (+ bias[N]); w in torch's Linear layout [out_features, in_features].
// Each y element is one dot product summed in the same order whatever M, N or the thread count,
// so a row's result does not depend on which other rows share the call.
void linear(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K);
// The same with w in bfloat16 (raw bits), widened exactly in registers: bit-identical to linear()
// on the float32 conversion of w, reading half the bytes.
void linear_bf16(const float* x, const uint16_t* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K);

// RMSNorm of each of `rows` rows of length `dim`: out = x / sqrt(mean(x^2) + eps) * weight.
// out may alias x.
void rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t dim, float eps);

// Rotary embedding in place on x[T, num_heads, head_dim] (rotate_half convention, gpu/rope.h);
// token t is at position positions[t]; inv_freq has head_dim/2 entries.
void rope(float* x, int64_t T, int64_t num_heads, int64_t head_dim, const int32_t* positions, const float* inv_freq);

// out[T, I] = silu(gate_up[T, 0:I]) * gate_up[T, I:2I] (gate and up projections fused as [T, 2I]).
void silu_mul(const float* gate_up, float* out, int64_t T, int64_t I);

// x[n] += y[n]
void add_inplace(float* x, const float* y, size_t n);

// One layer's paged KV cache: K and V each [num_blocks, block_size, num_kv_heads, head_dim], either
// float32 (k, v) or e4m3fn codes (k8, v8; kv_cache_dtype fp8) that hold x / k_scale and x / v_scale.
// Exactly one of the two pairs is set.
struct PagedKvLayer {
  float* k = nullptr;
  float* v = nullptr;
  int64_t num_blocks = 0;
  int64_t block_size = 16;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  uint8_t* k8 = nullptr;
  uint8_t* v8 = nullptr;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
};

// Stores k/v [T, num_kv_heads, head_dim] at cache slots (slot = block * block_size + offset); an
// fp8 cache stores e4m3(k / k_scale) and e4m3(v / v_scale) (round to nearest even, saturating).
void write_kv(const PagedKvLayer& cache, const float* k, const float* v, const int64_t* slots, int64_t T);

// One sequence's share of the flattened batch for attention: tokens [token_begin, +num_tokens)
// at positions [start_pos, +num_tokens); its keys/values for positions [0, start_pos + num_tokens)
// are in the cache blocks of block_table (logical block -> physical block).
struct AttentionSeq {
  int64_t token_begin = 0;
  int64_t num_tokens = 0;
  int64_t start_pos = 0;
  const int32_t* block_table = nullptr;
  int64_t block_table_len = 0;
};

// out[T, num_heads, head_dim] = softmax(q·K^T * scale) · V per sequence, causal: the token at
// position p sees positions [max(0, p - sliding_window + 1), p] (sliding_window 0 = unlimited).
// Query heads map to kv heads in groups (GQA): kv head = head / (num_heads / num_kv_heads).
// The chunk's own K/V must already be written to the cache. An fp8 cache is read as code · scale
// (float32), then computed with exactly as a float32 cache holding those values.
void paged_attention(const float* q, const PagedKvLayer& cache, const AttentionSeq* seqs, int64_t num_seqs,
                     int64_t num_heads, float scale, int64_t sliding_window, float* out);

// Dot product of two float arrays, 8 lanes then a fixed-order reduction.
float dot(const float* a, const float* b, int64_t n);

}  // namespace zinfer::gpu::cpu
