// The forward pass of Llama / Mistral / Qwen2 / Qwen3 over a flattened batch, and its CUDA graphs
// for decode-only steps. Per layer (T tokens, shapes in rows x columns; residual float32):
//   normed  [T, H]      = rmsnorm(residual)
//   qkv     [T, (Hq + 2 Hkv) D] = normed · Wqkv^T
//   q       [T, Hq, D]  = rope(norm(q + b)), K/V -> paged cache (qkv_rope)
//   attn    [T, Hq, D]  = paged attention (decode list: split-K; prefill tiles: tensor cores)
//   residual           += attn · Wo^T      (float32 out of the GEMM: no bf16 rounding of the sum)
//   normed              = rmsnorm(residual)
//   gate_up [T, 2I]     = normed · Wgu^T;  act [T, I] = silu(gate) * up
//   residual           += act · Wdown^T
// The o and down projections add into the residual stream in float32 (cuBLASLt with a float32
// C = D and beta 1), where a bf16 output added afterwards would round each layer's two updates
// to bf16 first: over 32 layers of an 8B model those two roundings were a visible part of the
// error against float32.
// Steps of at most kFusedDecodeMaxTokens rows (decode at batch 1-2) run the linear layers as
// GEMVs that stream the weights at close to copy bandwidth and absorb the small kernels around
// them (gemv.h): qkv and gate_up normalise the residual in their prologue, o and down add into
// the residual in their epilogue, gate_up computes silu(gate) * up in its epilogue. Per layer
// that is 6 kernels instead of 9, with the same roundings. At 4 rows and more cuBLASLt's tensor
// cores win (zinfer-cuda-bench gemv), so those steps keep the unfused layers.
#include <algorithm>
#include <cmath>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/cuda_backend_impl.h"
#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/embedding.h"
#include "gpu/cuda/gemv.h"
#include "gpu/cuda/qkv_rope.h"
#include "gpu/cuda/rmsnorm.h"
#include "gpu/cuda/silu_mul.h"

namespace zinfer::gpu::cuda {

namespace {
constexpr int32_t kFusedDecodeMaxTokens = 2;
}  // namespace

bool CudaBackend::fused_decode(int32_t num_tokens) const {
  const ModelConfig& c = config_;
  return num_tokens >= 1 && num_tokens <= kFusedDecodeMaxTokens && gemv_supports(num_tokens, c.hidden_size) &&
         gemv_supports(num_tokens, c.num_attention_heads * c.head_dim) && gemv_supports(num_tokens, c.intermediate_size);
}

int32_t CudaBackend::decode_splits(int32_t num_tokens) const {
  // Enough blocks to cover the chip a few times over; each split keeps >= 64 keys (the kernel
  // uses fewer splits for shorter contexts on its own).
  const ModelConfig& c = config_;
  const int32_t head_groups = (c.num_attention_heads / c.num_key_value_heads + 7) / 8;
  const int64_t blocks_per_split = static_cast<int64_t>(num_tokens) * c.num_key_value_heads * head_groups;
  int64_t splits = (4 * static_cast<int64_t>(num_sms_) + blocks_per_split - 1) / blocks_per_split;
  // A token attends at most max_model_len keys, or the sliding window's.
  const int64_t max_keys = c.sliding_window > 0 ? std::min(c.sliding_window, max_model_len_) : max_model_len_;
  splits = std::min<int64_t>(splits, (max_keys + 63) / 64);
  const int64_t capacity = static_cast<int64_t>(act_.partial_ml.bytes() / 8);  // (m, l) pairs
  splits = std::min<int64_t>(splits, capacity / (static_cast<int64_t>(num_tokens) * c.num_attention_heads));
  return static_cast<int32_t>(std::clamp<int64_t>(splits, 1, max_splits_));
}

int32_t CudaBackend::graph_bucket(int32_t n) const {
  if (n <= 0 || n > options_.max_num_seqs) return 0;
  int32_t bucket = 1;
  while (bucket < n && bucket < 8) bucket *= 2;
  if (bucket >= n) return std::min(bucket, options_.max_num_seqs);
  bucket = (n + 15) / 16 * 16;  // beyond 8: steps of 16
  return std::min(bucket, options_.max_num_seqs);
}

void CudaBackend::run_layers(const PackedStep& st) {
  const ModelConfig& c = config_;
  const int32_t T = st.padded_tokens;
  const int32_t H = c.hidden_size, D = c.head_dim, I = c.intermediate_size;
  const int32_t Hq = c.num_attention_heads, Hkv = c.num_key_value_heads;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const auto* meta = act_.meta.as<int32_t>();
  const StepLayout& L = *st.layout;
  int32_t* bad_ids = act_.results.as<int32_t>() + static_cast<size_t>(logit_rows_) * (2 + 2 * kMaxTopLogprobs);

  auto* residual = act_.residual.as<float>();
  auto* normed = act_.normed.as<__nv_bfloat16>();
  auto* qkv = act_.qkv.as<__nv_bfloat16>();
  auto* q = act_.q.as<__nv_bfloat16>();
  auto* attn = act_.attn.as<__nv_bfloat16>();
  auto* gate_up = act_.gate_up.as<__nv_bfloat16>();
  auto* mlp = act_.act.as<__nv_bfloat16>();

  check_cuda(launch_embedding(weights_.embed, meta + L.token_ids, meta + L.from_slot, act_.last_sampled.as<int32_t>(),
                              T, H, c.vocab_size, residual, bad_ids, compute_),
             "embedding");
  const int32_t splits = st.num_decode > 0 ? decode_splits(st.num_decode) : 1;
  const bool fused = fused_decode(T);
  const int32_t qkv_width = (Hq + 2 * Hkv) * D;
  // The decode GEMVs' two shapes (gemv.h) on this step's residual stream.
  auto normed_gemv = [&](const float* norm_weight, const __nv_bfloat16* w, __nv_bfloat16* y, int32_t n,
                         GemvOutput output) { return normed_gemv_args(residual, norm_weight, eps, w, y, output, T, n, H); };
  auto residual_gemv = [&](const __nv_bfloat16* x, const __nv_bfloat16* w, int32_t k) {
    return residual_gemv_args(x, w, residual, T, H, k);
  };
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerWeights& W = weights_.layers[l];
    if (fused) {
      check_cuda(launch_gemv(normed_gemv(W.input_norm, W.qkv, qkv, qkv_width, GemvOutput::kBf16), compute_),
                 "qkv gemv");
    } else {
      check_cuda(launch_rmsnorm(residual, W.input_norm, normed, T, H, eps, compute_), "input norm");
      gemm_->linear(normed, W.qkv, qkv, T, qkv_width, H, compute_);
    }

    QkvRopeParams rp;
    rp.qkv = qkv;
    rp.bias = W.qkv_bias;
    rp.q_norm = W.q_norm;
    rp.k_norm = W.k_norm;
    rp.inv_freq = act_.inv_freq.as<float>();
    rp.positions = meta + L.positions;
    rp.slot_mapping = meta + L.slot_mapping;
    rp.q_out = q;
    rp.k_cache = kv_->k(l);
    rp.v_cache = kv_->v(l);
    rp.num_tokens = T;
    rp.num_heads = Hq;
    rp.num_kv_heads = Hkv;
    rp.head_dim = D;
    rp.norm_eps = eps;
    check_cuda(launch_qkv_rope(rp, compute_), "qkv rope");

    PagedKv kv;
    kv.q = q;
    kv.k_cache = kv_->k(l);
    kv.v_cache = kv_->v(l);
    kv.out = attn;
    kv.positions = meta + L.positions;
    kv.token_seq = meta + L.token_seq;
    kv.seq_block_offset = meta + L.seq_block_offset;
    kv.block_tables = meta + L.block_tables;
    kv.num_heads = Hq;
    kv.num_kv_heads = Hkv;
    kv.head_dim = D;
    kv.block_size = options_.block_size;
    kv.scale = 1.0f / std::sqrt(static_cast<float>(D));
    kv.sliding_window = c.sliding_window;
    if (st.num_decode > 0) {
      DecodeWork work{meta + L.decode_tokens, st.num_decode, splits, act_.partial_acc.as<float>(),
                      act_.partial_ml.as<float>(), act_.split_counters.as<uint32_t>(), st.decode_tokens_alone};
      check_cuda(launch_decode_attention(kv, work, compute_), "decode attention");
    }
    if (st.num_tiles > 0) {
      check_cuda(launch_prefill_attention(kv, meta + L.tiles, st.num_tiles, compute_), "prefill attention");
    }
    if (fused) {
      // residual += attn · Wo^T; act = silu(gate) * up of rmsnorm(residual) · Wgu^T;
      // residual += act · Wdown^T
      check_cuda(launch_gemv(residual_gemv(attn, W.o, Hq * D), compute_), "o gemv");
      check_cuda(launch_gemv(normed_gemv(W.post_norm, W.gate_up, mlp, 2 * I, GemvOutput::kSiluMul), compute_),
                 "gate_up gemv");
      check_cuda(launch_gemv(residual_gemv(mlp, W.down, I), compute_), "down gemv");
      continue;
    }
    // gate_up's buffer is free at both accumulating GEMMs (written after the first, read before
    // the second): cuBLASLt's candidates for them are timed there.
    gemm_->linear_add_f32(attn, W.o, residual, T, H, static_cast<int64_t>(Hq) * D, compute_, gate_up,
                          act_.gate_up.bytes());
    check_cuda(launch_rmsnorm(residual, W.post_norm, normed, T, H, eps, compute_), "post-attention norm");
    gemm_->linear(normed, W.gate_up, gate_up, T, 2 * static_cast<int64_t>(I), H, compute_);
    check_cuda(launch_silu_mul(gate_up, mlp, T, I, compute_), "silu mul");
    gemm_->linear_add_f32(mlp, W.down, residual, T, H, I, compute_, gate_up, act_.gate_up.bytes());
  }
}

void CudaBackend::run_layers_maybe_graph(const PackedStep& st) {
  if (!options_.cuda_graphs || !st.decode_only || graph_bucket(st.num_tokens) != st.padded_tokens) {
    run_layers(st);
    return;
  }
  const int32_t bucket = st.padded_tokens;
  auto it = graphs_.find(bucket);
  if (it == graphs_.end()) {
    // The first step of a bucket runs eagerly (cuBLASLt picks its algorithms outside capture);
    // the second captures the graph that later steps replay.
    if (graph_warm_[bucket]++ == 0) {
      run_layers(st);
      return;
    }
    cudaGraph_t graph = nullptr;
    check_cuda(cudaStreamBeginCapture(compute_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
      run_layers(st);
    } catch (...) {
      cudaStreamEndCapture(compute_, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    check_cuda(cudaStreamEndCapture(compute_, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check_cuda(status, "cudaGraphInstantiate");
    it = graphs_.emplace(bucket, exec).first;
  }
  check_cuda(cudaGraphLaunch(it->second, compute_), "cudaGraphLaunch");
}

}  // namespace zinfer::gpu::cuda
