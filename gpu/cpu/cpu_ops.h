// The ops of gpu/models/forward_ops.h on the CPU: float32 arithmetic over one flattened batch
// (gpu/cpu/ops.h's kernels), buffers sized for the batch at hand.
#pragma once

#include <vector>

#include "gpu/cpu/cpu_weights.h"
#include "gpu/cpu/kv_cache.h"
#include "gpu/cpu/ops.h"
#include "gpu/model_config.h"
#include "gpu/models/forward_ops.h"
#include "gpu/rank_group.h"

namespace zinfer::gpu::cpu {

// The flattened batch of one forward pass: T tokens, grouped by sequence.
struct ForwardBatch {
  std::vector<int32_t> tokens;     // [T]
  std::vector<int32_t> positions;  // [T]
  std::vector<int64_t> slots;      // [T] cache slot (block * block_size + offset) of each token
  std::vector<AttentionSeq> seqs;  // block tables point into storage owned by the caller
  std::vector<int64_t> logit_rows; // tokens whose next-token logits are wanted
};

// Under tensor parallelism (gpu/models/tensor_parallel.h) `config` is the rank's local config,
// the embedding and LM head hold the rank's vocabulary rows, and the ops sum the ranks' partial
// results through the rank group: after the embedding and after each linear_residual (whose
// weight is row-parallel in every definition); logits() gathers the vocabulary.
class CpuForwardOps final : public models::ForwardOps {
 public:
  CpuForwardOps(const ModelConfig& config, models::Range vocab, const RankContext& rank,
                const CpuWeightStore& weights, const std::vector<float>& inv_freq, const ForwardBatch& batch,
                KvCache& cache);

  void embed(models::Linear table) override;
  void norm_linear(models::Vector norm, models::Linear w, models::Buffer out) override;
  void norm_gated_linear(models::Vector norm, models::Linear w, models::Activation act, models::Buffer out) override;
  void rotary_cache_write(const models::AttentionInputs& in, int32_t layer) override;
  void attention(int32_t layer) override;
  void linear_residual(models::Buffer in, models::Linear w, models::Vector bias) override;
  void logits(models::Vector norm, models::Linear head) override;

  // [logit_rows, vocab] after logits().
  std::vector<float>& result() { return logits_; }

 private:
  std::vector<float>& buffer(models::Buffer b);

  void all_reduce(std::vector<float>& v, size_t n);

  const ModelConfig& c_;
  models::Range vocab_;  // the rank's rows of the embedding and LM head
  const RankContext& rank_;
  const CpuWeightStore& w_;
  const std::vector<float>& inv_freq_;  // [head_dim / 2]
  const ForwardBatch& batch_;
  KvCache& cache_;
  int64_t T_;
  std::vector<float> x_;       // [T, H] residual stream
  std::vector<float> h_;       // [T, H] normed input of a sub-block
  std::vector<float> qkv_;     // [T, (nH + 2 nKV) D]
  std::vector<float> q_, k_, v_;  // [T, nH, D], [T, nKV, D], [T, nKV, D]
  std::vector<float> attn_;    // [T, nH, D]
  std::vector<float> proj_;    // [T, max(H, 2 I)]: a projection's output before it is used
  std::vector<float> mlp_;     // [T, I]
  std::vector<float> logits_;  // [R, V]
};

}  // namespace zinfer::gpu::cpu
