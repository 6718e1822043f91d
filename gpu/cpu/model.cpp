#include "gpu/cpu/model.h"

#include <cmath>
#include <string>

#include "gpu/cpu/ops.h"
#include "gpu/rope.h"

namespace zinfer::gpu::cpu {
namespace {

// Appends the tensor, converted to float32 and checked against `shape`, to `out`.
void load_into(const WeightSet& w, const std::string& name, const std::vector<int64_t>& shape,
               std::vector<float>& out) {
  const TensorView& t = w.get(name, shape);
  const size_t old = out.size();
  out.resize(old + static_cast<size_t>(t.numel()));
  to_float32(t, out.data() + old);
}

void load_into(const WeightSet& w, const std::string& name, const std::vector<int64_t>& shape, Matrix& out) {
  out.append(w.get(name, shape));
}

std::vector<float> load(const WeightSet& w, const std::string& name, const std::vector<int64_t>& shape) {
  std::vector<float> out;
  load_into(w, name, shape, out);
  return out;
}

}  // namespace

Model::Model(const ModelConfig& config, const WeightSet& w) : config_(config) {
  const int64_t H = config.hidden_size, V = config.vocab_size, I = config.intermediate_size;
  const int64_t D = config.head_dim, nH = config.num_attention_heads, nKV = config.num_key_value_heads;
  load_into(w, "model.embed_tokens.weight", {V, H}, embed_);
  norm_ = load(w, "model.norm.weight", {H});
  if (!config.tie_word_embeddings) {
    if (!w.has("lm_head.weight"))
      throw SafetensorsError("tensor 'lm_head.weight' not found and tie_word_embeddings is false");
    load_into(w, "lm_head.weight", {V, H}, lm_head_);
  }
  for (int64_t l = 0; l < config.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    Layer layer;
    layer.input_norm = load(w, p + "input_layernorm.weight", {H});
    load_into(w, p + "self_attn.q_proj.weight", {nH * D, H}, layer.qkv);
    load_into(w, p + "self_attn.k_proj.weight", {nKV * D, H}, layer.qkv);
    load_into(w, p + "self_attn.v_proj.weight", {nKV * D, H}, layer.qkv);
    if (config.attention_bias) {
      load_into(w, p + "self_attn.q_proj.bias", {nH * D}, layer.qkv_bias);
      load_into(w, p + "self_attn.k_proj.bias", {nKV * D}, layer.qkv_bias);
      load_into(w, p + "self_attn.v_proj.bias", {nKV * D}, layer.qkv_bias);
    }
    if (config.qk_norm) {
      layer.q_norm = load(w, p + "self_attn.q_norm.weight", {D});
      layer.k_norm = load(w, p + "self_attn.k_norm.weight", {D});
    }
    load_into(w, p + "self_attn.o_proj.weight", {H, nH * D}, layer.o);
    if (config.o_proj_bias) layer.o_bias = load(w, p + "self_attn.o_proj.bias", {H});
    layer.post_norm = load(w, p + "post_attention_layernorm.weight", {H});
    load_into(w, p + "mlp.gate_proj.weight", {I, H}, layer.gate_up);
    load_into(w, p + "mlp.up_proj.weight", {I, H}, layer.gate_up);
    load_into(w, p + "mlp.down_proj.weight", {H, I}, layer.down);
    layers_.push_back(std::move(layer));
  }
  inv_freq_ = rope_inv_freq(config);
}

std::vector<float> Model::forward(const ForwardBatch& batch, KvCache& cache) {
  const int64_t T = static_cast<int64_t>(batch.tokens.size());
  const int64_t H = config_.hidden_size, V = config_.vocab_size, I = config_.intermediate_size;
  const int64_t D = config_.head_dim, nH = config_.num_attention_heads, nKV = config_.num_key_value_heads;
  const int64_t QKV = (nH + 2 * nKV) * D;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));

  std::vector<float> x(T * H);            // [T, H] residual stream
  std::vector<float> h(T * H);            // [T, H] normed input of a sub-block
  std::vector<float> qkv(T * QKV);        // [T, (nH + 2 nKV) D]
  std::vector<float> q(T * nH * D);       // [T, nH, D]
  std::vector<float> k(T * nKV * D);      // [T, nKV, D]
  std::vector<float> v(T * nKV * D);      // [T, nKV, D]
  std::vector<float> attn(T * nH * D);    // [T, nH, D]
  std::vector<float> proj(T * H);         // [T, H] output of o_proj / down_proj
  std::vector<float> gate_up(T * 2 * I);  // [T, 2I]
  std::vector<float> act(T * I);          // [T, I]

  for (int64_t t = 0; t < T; ++t) embed_.row(batch.tokens[t], x.data() + t * H);
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& L = layers_[l];
    // Attention block.
    rms_norm(x.data(), L.input_norm.data(), h.data(), T, H, eps);
    L.qkv.apply(h.data(), L.qkv_bias.empty() ? nullptr : L.qkv_bias.data(), qkv.data(), T);
    for (int64_t t = 0; t < T; ++t) {
      const float* row = qkv.data() + t * QKV;
      std::copy(row, row + nH * D, q.data() + t * nH * D);
      std::copy(row + nH * D, row + (nH + nKV) * D, k.data() + t * nKV * D);
      std::copy(row + (nH + nKV) * D, row + QKV, v.data() + t * nKV * D);
    }
    if (config_.qk_norm) {  // Qwen3: RMSNorm over each head's D values, before rotary
      rms_norm(q.data(), L.q_norm.data(), q.data(), T * nH, D, eps);
      rms_norm(k.data(), L.k_norm.data(), k.data(), T * nKV, D, eps);
    }
    rope(q.data(), T, nH, D, batch.positions.data(), inv_freq_.data());
    rope(k.data(), T, nKV, D, batch.positions.data(), inv_freq_.data());
    const PagedKvLayer kv = cache.layer(static_cast<int64_t>(l));
    write_kv(kv, k.data(), v.data(), batch.slots.data(), T);
    paged_attention(q.data(), kv, batch.seqs.data(), static_cast<int64_t>(batch.seqs.size()), nH, scale,
                    config_.sliding_window, attn.data());
    L.o.apply(attn.data(), L.o_bias.empty() ? nullptr : L.o_bias.data(), proj.data(), T);
    add_inplace(x.data(), proj.data(), x.size());
    // MLP block.
    rms_norm(x.data(), L.post_norm.data(), h.data(), T, H, eps);
    L.gate_up.apply(h.data(), nullptr, gate_up.data(), T);
    silu_mul(gate_up.data(), act.data(), T, I);
    L.down.apply(act.data(), nullptr, proj.data(), T);
    add_inplace(x.data(), proj.data(), x.size());
  }
  // Final norm and lm_head only on the rows whose logits are wanted.
  const int64_t R = static_cast<int64_t>(batch.logit_rows.size());
  std::vector<float> last(R * H);  // [R, H]
  for (int64_t r = 0; r < R; ++r)
    std::copy(x.data() + batch.logit_rows[r] * H, x.data() + (batch.logit_rows[r] + 1) * H, last.data() + r * H);
  rms_norm(last.data(), norm_.data(), last.data(), R, H, eps);
  std::vector<float> logits(R * V);  // [R, V]
  (lm_head_.rows() == 0 ? embed_ : lm_head_).apply(last.data(), nullptr, logits.data(), R);
  return logits;
}

}  // namespace zinfer::gpu::cpu
