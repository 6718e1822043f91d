// The pre-norm decoder of the Llama lineage, shared by the architectures whose layers compute
//   h = x + o(attention(rotary(qkv(rmsnorm(x)))));  x' = h + down(act(gate(rmsnorm(h))) * up(...))
// and differ only in how their checkpoints name and fuse the tensors (llama.cpp, phi3.cpp).
#pragma once

#include <vector>

#include "gpu/models/model_definition.h"

namespace zinfer::gpu::models {

struct DecoderLayerWeights {
  Vector input_norm;          // [hidden]
  Linear qkv;                 // [(heads + 2 kv_heads) head_dim, hidden]: q rows, k rows, v rows
  AttentionInputs attention;  // qkv bias, q/k norms
  Linear o;                   // [hidden, heads head_dim]
  Vector o_bias;              // [hidden] or invalid
  Vector post_norm;           // [hidden]
  Linear gate_up;             // [2 intermediate, hidden]: gate rows, then up rows
  Linear down;                // [hidden, intermediate]
};

struct DecoderWeights {
  Linear embed;               // [vocab, hidden]
  Linear lm_head;             // [vocab, hidden]; the embedding when tied
  Vector final_norm;          // [hidden]
  std::vector<DecoderLayerWeights> layers;
};

class PreNormDecoder final : public ModelDefinition {
 public:
  PreNormDecoder(DecoderWeights weights, Activation activation)
      : w_(std::move(weights)), activation_(activation) {}
  void layers(ForwardOps& ops) const override;
  void head(ForwardOps& ops) const override;

 private:
  DecoderWeights w_;
  Activation activation_;
};

// The embedding, final norm and LM head as Llama-lineage checkpoints name them
// (model.embed_tokens, model.norm, lm_head unless tie_word_embeddings).
DecoderWeights declare_llama_outer_weights(const ModelConfig& config, WeightStore& store);

// The gate's activation named by config.hidden_act; ModelConfigError for others.
Activation gated_activation(const ModelConfig& config);

}  // namespace zinfer::gpu::models
