// Phi-3 (Phi3ForCausalLM): the Llama lineage's pre-norm decoder with q/k/v stored as one
// qkv_proj tensor and gate/up as one gate_up_proj tensor, already in the stacked order the ops
// want (q, k, v rows; gate, then up rows). No biases, no q/k norms. What Phi-3's config can ask
// beyond that (longrope scaling, partial rotary) is refused when the config is read
// (gpu/model_config.cpp).
#include "gpu/models/pre_norm_decoder.h"
#include "gpu/models/tensor_parallel.h"

namespace zinfer::gpu::models {
namespace {

std::unique_ptr<ModelDefinition> make_phi3(const ModelConfig& c, WeightStore& store) {
  const int64_t H = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
  const int64_t q_rows = int64_t{c.num_attention_heads} * D, kv_rows = int64_t{c.num_key_value_heads} * D;
  const int64_t qkv_rows = q_rows + 2 * kv_rows;
  const Activation activation = gated_activation(c);
  // A rank takes its q, k and v rows out of the one fused tensor, and its gate and up rows out
  // of the other (tensor_parallel.h).
  const Sharding sh = shard(c, store.parallel());
  const Range q = sh.q_rows(D), kv = sh.kv_rows(D), mlp = sh.intermediate;
  const Range k{q_rows + kv.begin, kv.count}, v{q_rows + kv_rows + kv.begin, kv.count};
  const Range up{I + mlp.begin, mlp.count};
  DecoderWeights w = declare_llama_outer_weights(c, store);
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const std::string qkv_name = p + "self_attn.qkv_proj.weight", gate_up_name = p + "mlp.gate_up_proj.weight";
    DecoderLayerWeights L;
    L.input_norm = store.vector({{p + "input_layernorm.weight", {H}}});
    L.qkv = store.linear({{qkv_name, {qkv_rows, H}, q}, {qkv_name, {qkv_rows, H}, k}, {qkv_name, {qkv_rows, H}, v}});
    L.o = store.linear({{p + "self_attn.o_proj.weight", {H, q_rows}, {}, q}});
    L.post_norm = store.vector({{p + "post_attention_layernorm.weight", {H}}});
    L.gate_up = store.linear({{gate_up_name, {2 * I, H}, mlp}, {gate_up_name, {2 * I, H}, up}});
    L.down = store.linear({{p + "mlp.down_proj.weight", {H, I}, {}, mlp}});
    w.layers.push_back(L);
  }
  return std::make_unique<PreNormDecoder>(std::move(w), activation);
}

}  // namespace

REGISTER_ARCHITECTURE("Phi3ForCausalLM", make_phi3);

}  // namespace zinfer::gpu::models
