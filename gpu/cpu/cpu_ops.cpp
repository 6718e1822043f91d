#include "gpu/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>

namespace zinfer::gpu::cpu {

using models::Buffer;

CpuForwardOps::CpuForwardOps(const ModelConfig& config, models::Range vocab, const RankContext& rank,
                             const CpuWeightStore& weights, const std::vector<float>& inv_freq,
                             const ForwardBatch& batch, KvCache& cache)
    : c_(config), vocab_(vocab), rank_(rank), w_(weights), inv_freq_(inv_freq), batch_(batch), cache_(cache),
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

void CpuForwardOps::all_reduce(std::vector<float>& v, size_t n) {
  if (rank_.group != nullptr) rank_.group->all_reduce_sum(rank_.rank, v.data(), n);
}

void CpuForwardOps::embed(models::Linear table) {
  // A token's row is on the rank whose vocabulary slice holds it; the others add zeros.
  const int64_t H = c_.hidden_size;
  const Matrix& e = w_.matrix(table);
  for (int64_t t = 0; t < T_; ++t) {
    const int64_t row = batch_.tokens[t] - vocab_.begin;
    if (row >= 0 && row < vocab_.count) e.row(row, x_.data() + t * H);
    else std::fill(x_.data() + t * H, x_.data() + (t + 1) * H, 0.0f);
  }
  all_reduce(x_, static_cast<size_t>(T_ * H));
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
  // Row-parallel: the ranks' products are summed before the add, and the bias is added once.
  const int64_t H = c_.hidden_size;
  const bool grouped = rank_.group != nullptr;
  w_.matrix(w).apply(buffer(in).data(), grouped ? nullptr : w_.data(bias), proj_.data(), T_);
  if (grouped) {
    all_reduce(proj_, static_cast<size_t>(T_ * H));
    if (const float* b = w_.data(bias))
      for (int64_t t = 0; t < T_; ++t) add_inplace(proj_.data() + t * H, b, static_cast<size_t>(H));
  }
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
  if (rank_.group == nullptr) {
    w_.matrix(head).apply(last.data(), nullptr, logits_.data(), R);
    return;
  }
  // Vocab-parallel head: each rank's [R, Vr] slice, gathered as [ranks, R, Vr], then laid out
  // as [R, V] without the padding rows past the vocabulary.
  const int64_t Vr = vocab_.count, N = rank_.size();
  std::vector<float> local(R * Vr), gathered(N * R * Vr);
  w_.matrix(head).apply(last.data(), nullptr, local.data(), R);
  rank_.group->all_gather(rank_.rank, local.data(), static_cast<size_t>(R * Vr), gathered.data());
  for (int64_t n = 0; n < N; ++n) {
    const int64_t v0 = n * Vr, width = std::min(Vr, V - v0);
    for (int64_t r = 0; r < R && width > 0; ++r)
      std::copy(gathered.data() + (n * R + r) * Vr, gathered.data() + (n * R + r) * Vr + width,
                logits_.data() + r * V + v0);
  }
}

}  // namespace zinfer::gpu::cpu
