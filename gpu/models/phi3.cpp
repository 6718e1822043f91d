// Phi-3 (Phi3ForCausalLM): the Llama lineage's pre-norm decoder with q/k/v stored as one
// qkv_proj tensor and gate/up as one gate_up_proj tensor, already in the stacked order the ops
// want (q, k, v rows; gate, then up rows). No biases, no q/k norms. What Phi-3's config can ask
// beyond that (longrope scaling, partial rotary) is refused when the config is read
// (gpu/model_config.cpp).
#include "gpu/models/pre_norm_decoder.h"

namespace zinfer::gpu::models {
namespace {

std::unique_ptr<ModelDefinition> make_phi3(const ModelConfig& c, WeightStore& store) {
  const int64_t H = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
  const int64_t qkv_rows = int64_t{c.num_attention_heads + 2 * c.num_key_value_heads} * D;
  const Activation activation = gated_activation(c);
  DecoderWeights w = declare_llama_outer_weights(c, store);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    DecoderLayerWeights L;
    L.input_norm = store.vector({{p + "input_layernorm.weight", {H}}});
    L.qkv = store.linear({{p + "self_attn.qkv_proj.weight", {qkv_rows, H}}});
    L.o = store.linear({{p + "self_attn.o_proj.weight", {H, int64_t{c.num_attention_heads} * D}}});
    L.post_norm = store.vector({{p + "post_attention_layernorm.weight", {H}}});
    L.gate_up = store.linear({{p + "mlp.gate_up_proj.weight", {2 * I, H}}});
    L.down = store.linear({{p + "mlp.down_proj.weight", {H, I}}});
    w.layers.push_back(L);
  }
  return std::make_unique<PreNormDecoder>(std::move(w), activation);
}

}  // namespace

REGISTER_ARCHITECTURE("Phi3ForCausalLM", make_phi3);

}  // namespace zinfer::gpu::models
