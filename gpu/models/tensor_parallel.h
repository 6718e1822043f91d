// Tensor parallelism as Megatron-LM defined it and vLLM serves it: each of `size` ranks holds a
// slice of every layer and the ranks sum their partial results twice per layer.
//   column-parallel  qkv (by heads), gate_up (by intermediate columns): a rank's rows of W; its
//                    output is its own heads / columns, no communication
//   row-parallel     o, down: a rank's columns of W over its heads / intermediate columns; the
//                    ranks' products are summed (all-reduce) before the residual add, and a bias
//                    is added once
//   vocab-parallel   embedding and LM head: a rank's rows of the vocabulary (padded to a multiple
//                    of size; the padding rows are zeros); the embedding is summed over ranks (a
//                    token's row is on one rank, zeros on the others), the logits are gathered
// With fewer key/value heads than ranks (GQA), each KV head is kept by size / num_kv_heads ranks,
// the ranks whose query heads read it (vLLM's replication).
#pragma once

#include "gpu/model_config.h"
#include "gpu/models/weight_store.h"

namespace zinfer::gpu::models {

// What one rank holds, in the global model's units.
struct Sharding {
  TensorParallel tp;
  Range q_heads;       // attention heads
  Range kv_heads;      // key/value heads (one replicated head when num_kv_heads < size)
  Range intermediate;  // MLP columns
  Range vocab;         // embedding / LM head rows; count = ceil(vocab / size), rows past vocab_size are zeros

  // Row ranges of the stacked projections, in rows of the checkpoint tensor.
  Range q_rows(int64_t head_dim) const { return {q_heads.begin * head_dim, q_heads.count * head_dim}; }
  Range kv_rows(int64_t head_dim) const { return {kv_heads.begin * head_dim, kv_heads.count * head_dim}; }
};

// The sharding of rank tp.rank; ModelConfigError naming the field the group size does not divide
// (num_attention_heads, num_key_value_heads, intermediate_size) or an invalid rank / size.
Sharding shard(const ModelConfig& config, TensorParallel tp);

// The config one rank computes with: its heads, KV heads and intermediate size. vocab_size stays
// the model's (token ids and sampled logits are global); the rank's LM head has shard().vocab.count rows.
ModelConfig local_config(const ModelConfig& config, TensorParallel tp);

}  // namespace zinfer::gpu::models
