// The ops of gpu/models/forward_ops.h on the CUDA backend's kernels, over one packed step. Shapes
// (T tokens, rows x columns; the residual stream float32, the rest bf16):
//   norm_linear        [T, H] -> [T, N]  GEMV with the RMSNorm in its prologue at 1-2 rows
//                                        (gemv.h) where the start-up plan keeps it there
//                                        (decode_linear_plan.h), else RMSNorm then cuBLASLt
//   norm_gated_linear  [T, H] -> [T, I]  the same with silu(gate) * up in the GEMV's epilogue,
//                                        else RMSNorm, cuBLASLt and the silu_mul kernel (run
//                                        when the output is first read; an FP8 down projection
//                                        quantizes silu(gate) * up from gate_up itself)
//   rotary_cache_write [T, (Hq + 2 Hkv) D] -> q [T, Hq, D], K/V -> paged cache (qkv_rope)
//   attention          decode list: split-K on tensor cores; prefill tiles: wgmma / mma.sync
// Int4 layers (GPTQ / AWQ checkpoints, cuda_weights.h) take RMSNorm as its own kernel, then the
// W4A16 kernel (w4_gemm.h) up to 64 rows, or W dequantized into scratch and cuBLASLt above.
//   linear_residual    residual += x · Wᵀ in float32 (GEMV epilogue, or cuBLASLt with a float32
//                      C = D and beta 1): a bf16 output added afterwards would round each layer's
//                      two updates to bf16 first, a visible part of the error against float32
//                      over the 32 layers of an 8B model.
// At 1-2 rows that is 6 kernels per layer instead of 9 with the same roundings; from 3 rows on
// cuBLASLt's tensor cores win (zinfer-cuda-bench gemv), and at 2 rows they win the larger layers
// on some GPUs: which layers of a 1-2 row step stay on the GEMV is measured at start-up.
// A tensor-parallel rank (gpu/models/tensor_parallel.h) runs the same ops on its slices, with
// all-reduces of the residual after the embedding and each linear_residual and an all-gather of
// the logits, all on the compute stream (so the decode graphs capture them): NCCL's, but for the
// linear_residual layers the fused GEMV takes, which all-reduce through the residual exchange
// (residual_exchange.h) in their own epilogue.
#pragma once

#include <optional>
#include <vector>

#include "gpu/cuda/cuda_backend_impl.h"
#include "gpu/cuda/gemv.h"
#include "gpu/decode_linear_plan.h"

namespace zinfer::gpu::cuda {

class CudaBackend::Ops final : public models::ForwardOps {
 public:
  // all_rows: logits() writes every row's logits there (forward_logits); null: the sampled rows'
  // into act_.logits (step).
  Ops(CudaBackend& backend, const PackedStep& step, std::vector<float>* all_rows = nullptr);

  void embed(models::Linear table) override;
  void norm_linear(models::Vector norm, models::Linear w, models::Buffer out) override;
  void norm_gated_linear(models::Vector norm, models::Linear w, models::Activation act, models::Buffer out) override;
  void rotary_cache_write(const models::AttentionInputs& in, int32_t layer) override;
  void attention(int32_t layer) override;
  void linear_residual(models::Buffer in, models::Linear w, models::Vector bias) override;
  // GEMVs launched with the residual exchange so far (the backend counts them, residual_exchange.h).
  int32_t exchanges() const { return exchanges_; }
  void logits(models::Vector norm, models::Linear head) override;

 private:
  // The buffer's storage, with silu(gate) · up computed into it first if norm_gated_linear left it
  // pending there.
  __nv_bfloat16* buffer(models::Buffer b);
  __nv_bfloat16* storage(models::Buffer b) const;
  void normed_gemv(models::Vector norm, models::Linear w, __nv_bfloat16* y, GemvOutput output);
  void norm_then_gemm(models::Vector norm, models::Linear w, __nv_bfloat16* y);
  // Whether the fused GEMV runs layer w of op `op` in this step (a decode step of 1-2 rows, a
  // dense layer, and the start-up plan keeping it on the GEMV, decode_linear_plan.h).
  bool gemv_takes(models::Linear w, LinearOp op) const;
  bool takes_exchange(models::Linear w, models::Vector bias, size_t elems) const;
  // An int4 layer (w4_gemm.h): into y (bf16), or added into the float32 residual; rows up to
  // kW4GemmMaxRows on the W4A16 kernel, more through W dequantized and cuBLASLt.
  void w4_linear(models::Linear w, const __nv_bfloat16* x, int32_t rows, __nv_bfloat16* y, float* residual);
  // The bf16 matrix cuBLASLt multiplies by: the layer's own, or an int4 layer's dequantized into
  // scratch (with *x moved to its act-order permutation).
  const __nv_bfloat16* dense(models::Linear w, const __nv_bfloat16*& x, int32_t rows);
  bool grouped() const { return b_.rank_.group != nullptr; }
  void gather_logits(int32_t rows, float* out);

  CudaBackend& b_;
  const PackedStep& st_;
  std::vector<float>* all_rows_;
  const int32_t* meta_;
  int32_t T_;
  float eps_;
  bool fused_;     // the GEMV layers (gemv.h) rather than cuBLASLt's
  int32_t splits_; // decode attention splits
  int32_t exchanges_ = 0;
  // What norm_gated_linear leaves uncomputed when cuBLASLt wrote [gate | up] into act_.gate_up:
  // the activation of `out` (`inter` columns). An FP8 layer reading `out` quantizes it straight
  // from gate_up (Fp8Layers::run_gated: the activation is never written and read back); any other
  // reader gets it from the silu_mul kernel first (buffer()).
  struct PendingActivation {
    models::Buffer out;
    int32_t inter;
  };
  std::optional<PendingActivation> pending_;
};

}  // namespace zinfer::gpu::cuda
