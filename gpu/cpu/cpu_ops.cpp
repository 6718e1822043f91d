#include "gpu/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>

namespace zinfer::gpu::cpu {

using models::Buffer;

CpuForwardOps::CpuForwardOps(const ModelConfig& config, const CpuWeightStore& weights,
                             const std::vector<float>& inv_freq, const ForwardBatch& batch, KvCache& cache)
    : c_(config), w_(weights), inv_freq_(inv_freq), batch_(batch), cache_(cache),
      T_(static_cast<int64_t>(batch.tokens.size())) {
  const int64_t H = c_.hidden_size, I = c_.intermediate_size, D = c_.head_dim;
  const int64_t nH = c_.num_attention_heads, nKV = c_.num_key_value_heads;
  x_.resize(T_ * H);
  h_.resize(T_ * H);
  qkv_.resize(T_ * (nH + 2 * nKV) * D);
  q_.resize(T_ * nH * D);
  k_.resize(T_ * nKV * D);
  v_.resize(T_ * nKV * D);
  attn_.resize(T_ * nH * D);
  proj_.resize(T_ * std::max(H, 2 * I));
  mlp_.resize(T_ * I);
}

std::vector<float>& CpuForwardOps::buffer(Buffer b) {
  switch (b) {
    case Buffer::kQkv: return qkv_;
    case Buffer::kAttn: return attn_;
    case Buffer::kMlp: return mlp_;
  }
  return qkv_;
}

void CpuForwardOps::embed(models::Linear table) {
  const int64_t H = c_.hidden_size;
  const Matrix& e = w_.matrix(table);
  for (int64_t t = 0; t < T_; ++t) e.row(batch_.tokens[t], x_.data() + t * H);
}

void CpuForwardOps::norm_linear(models::Vector norm, models::Linear w, Buffer out) {
  const int64_t H = c_.hidden_size;
  rms_norm(x_.data(), w_.data(norm), h_.data(), T_, H, static_cast<float>(c_.rms_norm_eps));
  w_.matrix(w).apply(h_.data(), nullptr, buffer(out).data(), T_);
}

void CpuForwardOps::norm_gated_linear(models::Vector norm, models::Linear w, models::Activation act, Buffer out) {
  const int64_t H = c_.hidden_size;
  const Matrix& m = w_.matrix(w);
  rms_norm(x_.data(), w_.data(norm), h_.data(), T_, H, static_cast<float>(c_.rms_norm_eps));
  m.apply(h_.data(), nullptr, proj_.data(), T_);  // [T, 2 I]: gate, up
  switch (act) {
    case models::Activation::kSilu:
      silu_mul(proj_.data(), buffer(out).data(), T_, m.rows() / 2);
      break;
  }
}

void CpuForwardOps::rotary_cache_write(const models::AttentionInputs& in, int32_t layer) {
  const int64_t D = c_.head_dim, nH = c_.num_attention_heads, nKV = c_.num_key_value_heads;
  const int64_t QKV = (nH + 2 * nKV) * D;
  const float eps = static_cast<float>(c_.rms_norm_eps);
  const float* bias = w_.data(in.qkv_bias);
  for (int64_t t = 0; t < T_; ++t) {
    float* row = qkv_.data() + t * QKV;
    if (bias != nullptr)
      for (int64_t i = 0; i < QKV; ++i) row[i] += bias[i];
    std::copy(row, row + nH * D, q_.data() + t * nH * D);
    std::copy(row + nH * D, row + (nH + nKV) * D, k_.data() + t * nKV * D);
    std::copy(row + (nH + nKV) * D, row + QKV, v_.data() + t * nKV * D);
  }
  if (in.q_norm.valid()) rms_norm(q_.data(), w_.data(in.q_norm), q_.data(), T_ * nH, D, eps);
  if (in.k_norm.valid()) rms_norm(k_.data(), w_.data(in.k_norm), k_.data(), T_ * nKV, D, eps);
  rope(q_.data(), T_, nH, D, batch_.positions.data(), inv_freq_.data());
  rope(k_.data(), T_, nKV, D, batch_.positions.data(), inv_freq_.data());
  write_kv(cache_.layer(layer), k_.data(), v_.data(), batch_.slots.data(), T_);
}

void CpuForwardOps::attention(int32_t layer) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(c_.head_dim));
  paged_attention(q_.data(), cache_.layer(layer), batch_.seqs.data(), static_cast<int64_t>(batch_.seqs.size()),
                  c_.num_attention_heads, scale, c_.sliding_window, attn_.data());
}

void CpuForwardOps::linear_residual(Buffer in, models::Linear w, models::Vector bias) {
  const int64_t H = c_.hidden_size;
  w_.matrix(w).apply(buffer(in).data(), w_.data(bias), proj_.data(), T_);
  add_inplace(x_.data(), proj_.data(), static_cast<size_t>(T_ * H));
}

void CpuForwardOps::logits(models::Vector norm, models::Linear head) {
  // Final norm and LM head only on the rows whose logits are wanted.
  const int64_t H = c_.hidden_size, V = c_.vocab_size;
  const int64_t R = static_cast<int64_t>(batch_.logit_rows.size());
  std::vector<float> last(R * H);  // [R, H]
  for (int64_t r = 0; r < R; ++r) {
    const float* row = x_.data() + batch_.logit_rows[r] * H;
    std::copy(row, row + H, last.data() + r * H);
  }
  rms_norm(last.data(), w_.data(norm), last.data(), R, H, static_cast<float>(c_.rms_norm_eps));
  logits_.resize(R * V);
  w_.matrix(head).apply(last.data(), nullptr, logits_.data(), R);
}

}  // namespace zinfer::gpu::cpu
