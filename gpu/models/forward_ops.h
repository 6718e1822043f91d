// The operations a model definition is written in, implemented once per backend (gpu/cpu/cpu_ops,
// gpu/cuda/cuda_ops). An op names what is computed, not which kernel computes it: the CUDA
// backend runs norm_linear as one GEMV with the RMSNorm in its prologue at one or two rows (where
// its start-up choice keeps the layer there) and as RMSNorm + cuBLASLt otherwise, so the
// definitions stay the same when a backend fuses differently.
//
// The state the ops work on belongs to the backend and is sized for its largest step (T tokens):
//   residual      [T, hidden] float32   the residual stream
//   Buffer::kQkv  [T, (heads + 2 kv_heads) head_dim]
//   Buffer::kAttn [T, heads head_dim]   attention output
//   Buffer::kMlp  [T, intermediate]     the gated MLP's activation
//   the layer's paged K/V cache, and the step's tokens, positions and block tables.
#pragma once

#include <cstdint>

#include "gpu/models/weight_store.h"

namespace zinfer::gpu::models {

enum class Buffer { kQkv, kAttn, kMlp };

// The gate's activation in a gated MLP: out = act(gate) * up.
enum class Activation { kSilu };

// What turns a layer's qkv rows into rotated queries and cached keys/values.
struct AttentionInputs {
  Vector qkv_bias;  // [(heads + 2 kv_heads) head_dim] added before the norms, or invalid
  Vector q_norm;    // [head_dim] RMSNorm of each query head (Qwen3), or invalid
  Vector k_norm;    // [head_dim] RMSNorm of each key head, or invalid
};

class ForwardOps {
 public:
  virtual ~ForwardOps() = default;
  // residual[t] = table[token t]   (table: [vocab, hidden])
  virtual void embed(Linear table) = 0;
  // out = rmsnorm(residual; norm) · Wᵀ
  virtual void norm_linear(Vector norm, Linear w, Buffer out) = 0;
  // out = act(a) * b where [a | b] = rmsnorm(residual; norm) · Wᵀ (W: [2 I, hidden])
  virtual void norm_gated_linear(Vector norm, Linear w, Activation act, Buffer out) = 0;
  // From Buffer::kQkv: q, k = rotary(norm(q|k + bias)), v + bias; K/V of every token go to the
  // layer's cache at the token's slot, q stays for attention().
  virtual void rotary_cache_write(const AttentionInputs& in, int32_t layer) = 0;
  // Buffer::kAttn = causal attention of the rotated queries over the layer's cached keys and
  // values (sliding window and GQA as the model config says).
  virtual void attention(int32_t layer) = 0;
  // residual += in · Wᵀ (+ bias)
  virtual void linear_residual(Buffer in, Linear w, Vector bias) = 0;
  // logits of the rows the step samples (or asks logits of) = rmsnorm(residual; norm) · headᵀ
  virtual void logits(Vector norm, Linear head) = 0;
};

}  // namespace zinfer::gpu::models
