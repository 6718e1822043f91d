#include "gpu/models/pre_norm_decoder.h"

#include "gpu/models/tensor_parallel.h"

namespace zinfer::gpu::models {

void PreNormDecoder::layers(ForwardOps& ops) const {
  ops.embed(w_.embed);
  for (size_t l = 0; l < w_.layers.size(); ++l) {
    const DecoderLayerWeights& L = w_.layers[l];
    const auto layer = static_cast<int32_t>(l);
    ops.norm_linear(L.input_norm, L.qkv, Buffer::kQkv);
    ops.rotary_cache_write(L.attention, layer);
    ops.attention(layer);
    ops.linear_residual(Buffer::kAttn, L.o, L.o_bias);
    ops.norm_gated_linear(L.post_norm, L.gate_up, activation_, Buffer::kMlp);
    ops.linear_residual(Buffer::kMlp, L.down, Vector{});
  }
}

void PreNormDecoder::head(ForwardOps& ops) const { ops.logits(w_.final_norm, w_.lm_head); }

DecoderWeights declare_llama_outer_weights(const ModelConfig& c, WeightStore& store) {
  const int64_t V = c.vocab_size, H = c.hidden_size;
  const Range vocab = shard(c, store.parallel()).vocab;  // vocab-parallel (tensor_parallel.h)
  DecoderWeights w;
  w.embed = store.linear({{"model.embed_tokens.weight", {V, H}, vocab}});
  w.final_norm = store.vector({{"model.norm.weight", {H}}});
  w.lm_head = c.tie_word_embeddings ? w.embed : store.linear({{"lm_head.weight", {V, H}, vocab}});
  return w;
}

Activation gated_activation(const ModelConfig& c) {
  if (c.hidden_act == "silu") return Activation::kSilu;
  throw ModelConfigError(c.architecture_name + ": unsupported hidden_act '" + c.hidden_act + "' (supported: silu)");
}

}  // namespace zinfer::gpu::models
