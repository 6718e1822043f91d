#include "gpu/cuda/cuda_ops.h"

#include <algorithm>
#include <cmath>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/bias_add.h"
#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/embedding.h"
#include "gpu/cuda/gemv.h"
#include "gpu/cuda/nccl_group.h"
#include "gpu/cuda/qkv_rope.h"
#include "gpu/cuda/residual_exchange.h"
#include "gpu/cuda/rmsnorm.h"
#include "gpu/cuda/silu_mul.h"
#include "gpu/cuda/w4_gemm.h"

namespace zinfer::gpu::cuda {

using models::Buffer;

CudaBackend::Ops::Ops(CudaBackend& backend, const PackedStep& step, std::vector<float>* all_rows)
    : b_(backend), st_(step), all_rows_(all_rows), meta_(backend.act_.meta.as<int32_t>()), T_(step.padded_tokens),
      eps_(static_cast<float>(backend.config_.rms_norm_eps)), fused_(backend.fused_decode(step.padded_tokens)),
      splits_(step.num_decode > 0 ? backend.decode_splits(step.num_decode) : 1) {}

__nv_bfloat16* CudaBackend::Ops::buffer(Buffer b) {
  if (pending_ && pending_->out == b) {
    const PendingActivation p = *pending_;
    pending_.reset();
    check_cuda(launch_silu_mul(b_.act_.gate_up.as<__nv_bfloat16>(), storage(b), T_, p.inter, b_.compute_), "silu mul");
  }
  return storage(b);
}

__nv_bfloat16* CudaBackend::Ops::storage(Buffer b) const {
  switch (b) {
    case Buffer::kQkv: return b_.act_.qkv.as<__nv_bfloat16>();
    case Buffer::kAttn: return b_.act_.attn.as<__nv_bfloat16>();
    case Buffer::kMlp: return b_.act_.act.as<__nv_bfloat16>();
  }
  return nullptr;
}

void CudaBackend::Ops::embed(models::Linear table) {
  const ModelConfig& c = b_.config_;
  const StepLayout& L = *st_.layout;
  int32_t* bad_ids = b_.act_.results.as<int32_t>() + static_cast<size_t>(b_.logit_rows_) * (2 + 2 * kMaxTopLogprobs);
  check_cuda(launch_embedding(b_.weights_.matrix(table), static_cast<int32_t>(b_.vocab_.begin),
                              static_cast<int32_t>(b_.weights_.rows(table)), meta_ + L.token_ids, meta_ + L.from_slot,
                              b_.act_.last_sampled.as<int32_t>(), T_, c.hidden_size, c.vocab_size,
                              b_.act_.residual.as<float>(), bad_ids, b_.compute_),
             "embedding");
  // Vocab-parallel: a token's row came from one rank, zeros from the others.
  if (grouped()) nccl_all_reduce_sum(b_.rank_.nccl_comm, b_.act_.residual.as<float>(),
                                     static_cast<size_t>(T_) * c.hidden_size, b_.compute_);
}

// y = rmsnorm(residual) · Wᵀ through the GEMV with the norm in its prologue and `output` as its
// epilogue (1-2 rows).
void CudaBackend::Ops::normed_gemv(models::Vector norm, models::Linear w, __nv_bfloat16* y, GemvOutput output) {
  const int32_t H = b_.config_.hidden_size, N = static_cast<int32_t>(b_.weights_.rows(w));
  check_cuda(launch_gemv(normed_gemv_args(b_.act_.residual.as<float>(), b_.weights_.data(norm), eps_,
                                          b_.weights_.matrix(w), y, output, T_, N, H),
                         b_.compute_),
             "norm + linear gemv");
}

// y = rmsnorm(residual) · Wᵀ as two steps: the RMSNorm kernel, then the layer's product (int4,
// FP8 or cuBLASLt), for what the fused GEMV does not take (3 rows and more, quantized layers).
void CudaBackend::Ops::norm_then_gemm(models::Vector norm, models::Linear w, __nv_bfloat16* y) {
  const int32_t H = b_.config_.hidden_size, N = static_cast<int32_t>(b_.weights_.rows(w));
  auto* normed = b_.act_.normed.as<__nv_bfloat16>();
  auto* residual = b_.act_.residual.as<float>();
  if (b_.weights_.fp8().has(w))
    return b_.weights_.fp8().run_normed(w, residual, b_.weights_.data(norm), eps_, normed, T_, {y, nullptr},
                                        b_.compute_);
  check_cuda(launch_rmsnorm(residual, b_.weights_.data(norm), normed, T_, H, eps_, b_.compute_), "rmsnorm");
  if (b_.weights_.int4(w)) return w4_linear(w, normed, T_, y, nullptr);
  b_.gemm_->linear(normed, b_.weights_.matrix(w), y, T_, N, H, b_.compute_);
}

// The fused GEMV (RMSNorm prologue, its epilogues) takes dense layers of one or two rows that the
// start-up plan keeps on it.
bool CudaBackend::Ops::gemv_takes(models::Linear w, LinearOp op) const {
  return fused_ && !b_.weights_.int4(w) && !b_.weights_.fp8().has(w) &&
         b_.decode_linears_.gemv({op, b_.weights_.rows(w), b_.weights_.cols(w)}, T_);
}

const __nv_bfloat16* CudaBackend::Ops::dense(models::Linear w, const __nv_bfloat16*& x, int32_t rows) {
  if (!b_.weights_.int4(w)) return b_.weights_.matrix(w);
  const W4Weight q = b_.weights_.w4(w);
  if (q.perm != nullptr) {
    auto* permuted = b_.act_.w4_permuted.as<__nv_bfloat16>();
    check_cuda(launch_w4_permute(x, q.perm, permuted, rows, q.k, b_.compute_), "act-order permutation");
    x = permuted;
  }
  auto* out = b_.act_.w4_dense.as<__nv_bfloat16>();
  check_cuda(launch_w4_dequantize(q, out, b_.compute_), "int4 dequantization");
  return out;
}

void CudaBackend::Ops::w4_linear(models::Linear w, const __nv_bfloat16* x, int32_t rows, __nv_bfloat16* y,
                                 float* residual) {
  const W4Weight q = b_.weights_.w4(w);
  const W4Path path = b_.w4_paths_.path({q.n, q.k, y == nullptr}, rows);  // the start-up timing's choice
  if (path != W4Path::kDequantized) {
    W4GemmArgs a;
    a.w = q;
    a.x = x;
    a.m = rows;
    a.output = y != nullptr ? W4Output::kBf16 : W4Output::kAddToResidual;
    a.y = y;
    a.residual = residual;
    a.partials = b_.act_.w4_partials.as<float>();
    a.counters = b_.act_.w4_counters.as<uint32_t>();
    if (path == W4Path::kFewRows) {
      check_cuda(launch_w4_gemm(a, b_.compute_), "int4 linear");
      return;
    }
    if (q.perm != nullptr) {  // the wide kernel reads x in the packed input order
      auto* permuted = b_.act_.w4_permuted.as<__nv_bfloat16>();
      check_cuda(launch_w4_permute(x, q.perm, permuted, rows, q.k, b_.compute_), "act-order permutation");
      a.x = permuted;
    }
    a.wide_tokens = path == W4Path::kWide128 ? 128 : 256;
    check_cuda(launch_w4_gemm_wide(a, b_.compute_), "int4 linear (many rows)");
    return;
  }
  const __nv_bfloat16* weights = dense(w, x, rows);
  if (y != nullptr) b_.gemm_->linear(x, weights, y, rows, q.n, q.k, b_.compute_);
  else b_.gemm_->linear_add_f32(x, weights, residual, rows, q.n, q.k, b_.compute_);
}

void CudaBackend::Ops::norm_linear(models::Vector norm, models::Linear w, Buffer out) {
  if (gemv_takes(w, LinearOp::kNormLinear)) normed_gemv(norm, w, buffer(out), GemvOutput::kBf16);
  else norm_then_gemm(norm, w, buffer(out));
}

void CudaBackend::Ops::norm_gated_linear(models::Vector norm, models::Linear w, models::Activation act, Buffer out) {
  switch (act) {  // a new activation adds its epilogue and kernel here (the compiler names this place)
    case models::Activation::kSilu:
      break;
  }
  if (gemv_takes(w, LinearOp::kNormGatedLinear)) {
    normed_gemv(norm, w, buffer(out), GemvOutput::kSiluMul);
    return;
  }
  if (pending_) buffer(pending_->out);  // computed from gate_up before it is overwritten
  norm_then_gemm(norm, w, b_.act_.gate_up.as<__nv_bfloat16>());
  pending_ = PendingActivation{out, static_cast<int32_t>(b_.weights_.rows(w)) / 2};
}

void CudaBackend::Ops::rotary_cache_write(const models::AttentionInputs& in, int32_t layer) {
  const ModelConfig& c = b_.config_;
  const StepLayout& L = *st_.layout;
  QkvRopeParams rp;
  rp.qkv = buffer(Buffer::kQkv);
  rp.bias = b_.weights_.data(in.qkv_bias);
  rp.q_norm = b_.weights_.data(in.q_norm);
  rp.k_norm = b_.weights_.data(in.k_norm);
  rp.inv_freq = b_.act_.inv_freq.as<float>();
  rp.positions = meta_ + L.positions;
  rp.slot_mapping = meta_ + L.slot_mapping;
  rp.q_out = b_.act_.q.as<__nv_bfloat16>();
  rp.k_cache = b_.kv_->k(layer);
  rp.v_cache = b_.kv_->v(layer);
  rp.k_cache8 = b_.kv_->k8(layer);
  rp.v_cache8 = b_.kv_->v8(layer);
  rp.k_scale = b_.kv_->k_scale(layer);
  rp.v_scale = b_.kv_->v_scale(layer);
  rp.num_tokens = T_;
  rp.num_heads = c.num_attention_heads;
  rp.num_kv_heads = c.num_key_value_heads;
  rp.head_dim = c.head_dim;
  rp.norm_eps = eps_;
  check_cuda(launch_qkv_rope(rp, b_.compute_), "qkv rope");
}

void CudaBackend::Ops::attention(int32_t layer) {
  const ModelConfig& c = b_.config_;
  const StepLayout& L = *st_.layout;
  PagedKv kv;
  kv.q = b_.act_.q.as<__nv_bfloat16>();
  kv.k_cache = b_.kv_->k(layer);
  kv.v_cache = b_.kv_->v(layer);
  kv.k_cache8 = b_.kv_->k8(layer);
  kv.v_cache8 = b_.kv_->v8(layer);
  kv.k_scale = b_.kv_->k_scale(layer);
  kv.v_scale = b_.kv_->v_scale(layer);
  kv.out = buffer(Buffer::kAttn);
  kv.positions = meta_ + L.positions;
  kv.token_seq = meta_ + L.token_seq;
  kv.seq_block_offset = meta_ + L.seq_block_offset;
  kv.block_tables = meta_ + L.block_tables;
  kv.num_heads = c.num_attention_heads;
  kv.num_kv_heads = c.num_key_value_heads;
  kv.head_dim = c.head_dim;
  kv.block_size = b_.options_.block_size;
  kv.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  kv.sliding_window = c.sliding_window;
  if (st_.num_decode > 0) {
    DecodeWork work{meta_ + L.decode_tokens, st_.num_decode, splits_, b_.act_.partial_acc.as<float>(),
                    b_.act_.partial_ml.as<float>(), b_.act_.split_counters.as<uint32_t>(), st_.decode_tokens_alone};
    check_cuda(launch_decode_attention(kv, work, b_.compute_), "decode attention");
  }
  if (st_.num_tiles > 0) {
    check_cuda(launch_prefill_attention(kv, meta_ + L.tiles, st_.num_tiles, b_.compute_), "prefill attention");
  }
}

// A row-parallel layer's all-reduce goes through the residual exchange in decode steps the fused
// GEMV takes, for dense layers without a bias (rank 0 adds a bias with the NCCL path's kernel).
bool CudaBackend::Ops::takes_exchange(models::Linear w, models::Vector bias, size_t elems) const {
  return b_.exchange_ != nullptr && gemv_takes(w, LinearOp::kLinearResidual) && !bias.valid() &&
         b_.exchange_->fits(elems);
}

void CudaBackend::Ops::linear_residual(Buffer in, models::Linear w, models::Vector bias) {
  const int32_t N = static_cast<int32_t>(b_.weights_.rows(w)), K = static_cast<int32_t>(b_.weights_.cols(w));
  auto* residual = b_.act_.residual.as<float>();
  const size_t elems = static_cast<size_t>(T_) * N;
  if (takes_exchange(w, bias, elems)) {
    // The GEMV all-reduces its rows itself (residual_exchange.h): no kernel between it and the next.
    check_cuda(launch_gemv(exchange_gemv_args(buffer(in), b_.weights_.matrix(w), b_.exchange_->view(), residual, T_, N, K),
                           b_.compute_),
               "linear gemv with the residual exchange");
    ++exchanges_;
    return;
  }
  // Row-parallel (tensor_parallel.h) through NCCL: rank 0 adds its product (and the bias) to the
  // residual as one rank would, the others start from zeros so that the ranks' sum is the
  // residual plus every rank's product. The epilogues that add into the residual stay as they are.
  if (grouped() && b_.rank_.rank != 0) {
    check_cuda(cudaMemsetAsync(residual, 0, elems * sizeof(float), b_.compute_), "cudaMemsetAsync");
    bias = models::Vector{};
  }
  if (b_.weights_.int4(w)) {
    w4_linear(w, buffer(in), T_, nullptr, residual);
  } else if (b_.weights_.fp8().has(w) && pending_ && pending_->out == in) {
    pending_.reset();
    b_.weights_.fp8().run_gated(w, b_.act_.gate_up.as<__nv_bfloat16>(), storage(in), T_, {nullptr, residual},
                                b_.compute_);
  } else if (b_.weights_.fp8().has(w)) {
    b_.weights_.fp8().run(w, buffer(in), T_, {nullptr, residual}, b_.compute_);
  } else if (gemv_takes(w, LinearOp::kLinearResidual)) {
    check_cuda(launch_gemv(residual_gemv_args(buffer(in), b_.weights_.matrix(w), residual, T_, N, K), b_.compute_),
               "linear + residual gemv");
  } else {
    b_.gemm_->linear_add_f32(buffer(in), b_.weights_.matrix(w), residual, T_, N, K, b_.compute_);
  }
  if (bias.valid()) check_cuda(launch_bias_add(residual, b_.weights_.data(bias), T_, N, b_.compute_), "bias add");
  if (grouped()) nccl_all_reduce_sum(b_.rank_.nccl_comm, residual, elems, b_.compute_);
}

// Vocab-parallel LM head: the rank's [rows, slice] logits are gathered as [ranks, rows, slice]
// and laid out as [rows, vocab] at `out`, without the padding rows past the vocabulary. One row
// (a decode step of one sequence) is already in that layout: it is gathered into `out` itself
// (which holds the last slice's padding, cuda_backend.cpp), with no copy after it.
void CudaBackend::Ops::gather_logits(int32_t rows, float* out) {
  const int64_t V = b_.config_.vocab_size, Vr = b_.vocab_.count;
  const size_t part = static_cast<size_t>(rows) * Vr;
  if (rows == 1) {
    nccl_all_gather(b_.rank_.nccl_comm, b_.act_.head_local.as<float>(), out, part, b_.compute_);
    return;
  }
  auto* gathered = b_.act_.head_gathered.as<float>();
  nccl_all_gather(b_.rank_.nccl_comm, b_.act_.head_local.as<float>(), gathered, part, b_.compute_);
  for (int32_t n = 0; n < b_.rank_.size(); ++n) {
    const int64_t width = std::min<int64_t>(Vr, V - n * Vr);
    if (width <= 0) break;
    check_cuda(cudaMemcpy2DAsync(out + n * Vr, V * sizeof(float), gathered + n * part, Vr * sizeof(float),
                                 width * sizeof(float), rows, cudaMemcpyDeviceToDevice, b_.compute_),
               "layout of gathered logits");
  }
}

void CudaBackend::Ops::logits(models::Vector norm, models::Linear head) {
  const ModelConfig& c = b_.config_;
  auto* residual = b_.act_.residual.as<float>();
  const float* norm_w = b_.weights_.data(norm);
  auto* logits = b_.act_.logits.as<float>();
  const auto head_rows = static_cast<int32_t>(b_.weights_.rows(head));  // the rank's vocabulary slice
  if (all_rows_ == nullptr) {
    // The LM head stays on cuBLASLt: a GEMV with the final norm as its prologue streamed the
    // head no faster than cuBLASLt and the decode step was no faster with it (gpu.md).
    const auto R = static_cast<int32_t>(st_.rows.size());
    auto* rows = b_.act_.final_rows.as<__nv_bfloat16>();
    check_cuda(launch_rmsnorm(residual, norm_w, rows, R, c.hidden_size, eps_, b_.compute_, meta_ + st_.layout->sample_rows),
               "final norm");
    const __nv_bfloat16* x = rows;
    const __nv_bfloat16* w = dense(head, x, R);
    b_.gemm_->linear_f32_out(x, w, grouped() ? b_.act_.head_local.as<float>() : logits, R, head_rows, c.hidden_size,
                             b_.compute_);
    if (grouped()) gather_logits(R, logits);
    return;
  }
  const int32_t T = st_.num_tokens;
  auto* normed = b_.act_.normed.as<__nv_bfloat16>();
  check_cuda(launch_rmsnorm(residual, norm_w, normed, T, c.hidden_size, eps_, b_.compute_), "final norm");
  all_rows_->resize(static_cast<size_t>(T) * c.vocab_size);
  for (int32_t r0 = 0; r0 < T; r0 += b_.logit_rows_) {
    const int32_t n = std::min(b_.logit_rows_, T - r0);
    const __nv_bfloat16* x = normed + static_cast<size_t>(r0) * c.hidden_size;
    const __nv_bfloat16* w = dense(head, x, n);
    b_.gemm_->linear_f32_out(x, w, grouped() ? b_.act_.head_local.as<float>() : logits, n, head_rows, c.hidden_size,
                             b_.compute_);
    if (grouped()) gather_logits(n, logits);
    check_cuda(cudaMemcpyAsync(all_rows_->data() + static_cast<size_t>(r0) * c.vocab_size, logits,
                               static_cast<size_t>(n) * c.vocab_size * 4, cudaMemcpyDeviceToHost, b_.compute_),
               "download of logits");
    check_cuda(cudaStreamSynchronize(b_.compute_), "forward_logits");
  }
}

}  // namespace zinfer::gpu::cuda
