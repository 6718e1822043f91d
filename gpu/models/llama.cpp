// Llama, Mistral, Qwen2 and Qwen3: one pre-norm decoder whose variants are flags of ModelConfig
// (q/k/v bias: Qwen2 always, Llama and Qwen3 with attention_bias; o_proj bias: Llama and Qwen3
// with attention_bias; per-head q/k RMSNorm: Qwen3; sliding window: Mistral and Qwen2/3 with
// use_sliding_window). The checkpoint keeps q/k/v and gate/up as separate tensors; they are
// stacked into one matrix each.
#include "gpu/models/pre_norm_decoder.h"
#include "gpu/models/tensor_parallel.h"

namespace zinfer::gpu::models {
namespace {

std::unique_ptr<ModelDefinition> make_llama(const ModelConfig& c, WeightStore& store) {
  const int64_t H = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
  const int64_t q_rows = int64_t{c.num_attention_heads} * D, kv_rows = int64_t{c.num_key_value_heads} * D;
  const Activation activation = gated_activation(c);
  // A rank's slices (tensor_parallel.h); the whole model for a group of one.
  const Sharding sh = shard(c, store.parallel());
  const Range q = sh.q_rows(D), kv = sh.kv_rows(D), mlp = sh.intermediate;
  DecoderWeights w = declare_llama_outer_weights(c, store);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    DecoderLayerWeights L;
    L.input_norm = store.vector({{p + "input_layernorm.weight", {H}}});
    L.qkv = store.linear({{p + "self_attn.q_proj.weight", {q_rows, H}, q},
                          {p + "self_attn.k_proj.weight", {kv_rows, H}, kv},
                          {p + "self_attn.v_proj.weight", {kv_rows, H}, kv}});
    if (c.attention_bias) {
      L.attention.qkv_bias = store.vector({{p + "self_attn.q_proj.bias", {q_rows}, q},
                                           {p + "self_attn.k_proj.bias", {kv_rows}, kv},
                                           {p + "self_attn.v_proj.bias", {kv_rows}, kv}});
    }
    if (c.qk_norm) {
      L.attention.q_norm = store.vector({{p + "self_attn.q_norm.weight", {D}}});
      L.attention.k_norm = store.vector({{p + "self_attn.k_norm.weight", {D}}});
    }
    L.o = store.linear({{p + "self_attn.o_proj.weight", {H, q_rows}, {}, q}});
    if (c.o_proj_bias) L.o_bias = store.vector({{p + "self_attn.o_proj.bias", {H}}});
    L.post_norm = store.vector({{p + "post_attention_layernorm.weight", {H}}});
    L.gate_up = store.linear({{p + "mlp.gate_proj.weight", {I, H}, mlp}, {p + "mlp.up_proj.weight", {I, H}, mlp}});
    L.down = store.linear({{p + "mlp.down_proj.weight", {H, I}, {}, mlp}});
    w.layers.push_back(L);
  }
  return std::make_unique<PreNormDecoder>(std::move(w), activation);
}

}  // namespace

REGISTER_ARCHITECTURE("LlamaForCausalLM", make_llama);
REGISTER_ARCHITECTURE("MistralForCausalLM", make_llama);
REGISTER_ARCHITECTURE("Qwen2ForCausalLM", make_llama);
REGISTER_ARCHITECTURE("Qwen3ForCausalLM", make_llama);

}  // namespace zinfer::gpu::models
