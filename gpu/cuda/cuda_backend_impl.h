// The CUDA backend's state. cuda_backend.cpp holds construction and the step protocol (copies,
// inputs, sampling, results); cuda_ops.cpp the model definition's ops on this backend's kernels;
// cuda_forward.cpp the forward pass, its CUDA graphs and the start-up warm-up (GEMM tuning,
// graph capture) that keeps both off the serving path.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <optional>
#include <random>

#include "gpu/backend.h"
#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/residual_exchange.h"
#include "gpu/models/tensor_parallel.h"
#include "gpu/rank_group.h"
#include "gpu/cuda/gemm.h"
#include "gpu/cuda/kv_cache.h"
#include "gpu/cuda/cuda_weights.h"
#include "gpu/cuda/sampling.h"
#include "gpu/cuda/sampling_rules_state.h"
#include "gpu/cuda/step_inputs.h"
#include "gpu/cuda/w4_path_plan.h"
#include "gpu/decode_linear_plan.h"
#include "gpu/models/model_definition.h"

namespace zinfer::gpu::cuda {

// Activation buffers for the largest step (max_num_batched_tokens rows).
struct Activations {
  DeviceBuffer residual;   // [T, hidden] float32
  DeviceBuffer normed;     // [T, hidden] bf16
  DeviceBuffer qkv;        // [T, (heads + 2 kv_heads) * head_dim] bf16
  DeviceBuffer q;          // [T, heads * head_dim] bf16 (after rope)
  DeviceBuffer attn;       // [T, heads * head_dim] bf16
  DeviceBuffer gate_up;    // [T, 2 * intermediate] bf16
  DeviceBuffer act;        // [T, intermediate] bf16
  DeviceBuffer final_rows; // [logit_rows, hidden] bf16: final-norm rows that get logits
  DeviceBuffer logits;     // [logit_rows, vocab] float32
  DeviceBuffer partial_acc, partial_ml, split_counters;  // split-K decode attention
  DeviceBuffer meta;       // the step's packed arrays (StepLayout)
  DeviceBuffer sampling_scratch;  // [logit_rows] rows of sampling_scratch_bytes
  DeviceBuffer results;    // sampled tokens, logprobs, top logprobs, bad-id counter
  DeviceBuffer last_sampled;  // [LastTokenSlots capacity] int32
  DeviceBuffer inv_freq;   // [head_dim / 2] float32
  // Tensor parallelism: the rank's LM-head rows [logit_rows, vocab slice] and every rank's,
  // gathered [ranks, logit_rows, vocab slice], before they are laid out in `logits`.
  DeviceBuffer head_local, head_gathered;
  // Int4 layers (w4_gemm.h): the kernel's split partials and counters, a layer dequantized to bf16
  // for cuBLASLt (steps over kW4GemmMaxRows rows; an int4 LM head), x in act-order.
  DeviceBuffer w4_partials, w4_counters, w4_dense, w4_permuted;
  size_t bytes() const;
};

class CudaBackend final : public Backend {
 public:
  // A rank of a tensor-parallel group (rank.group set) loads its shard onto rank.device and sums
  // with its peers through rank.nccl_comm (gpu/models/tensor_parallel.h).
  explicit CudaBackend(const BackendOptions& options, const RankContext& rank = {});
  // Benchmarks: the config's shapes with seeded random weights on the device (no checkpoint).
  CudaBackend(const BackendOptions& options, const ModelConfig& config, uint64_t seed, const RankContext& rank = {});
  ~CudaBackend() override;

  const ModelConfig& config() const override { return model_config_; }
  CacheGeometry cache_geometry() const override;
  std::vector<SampledToken> step(const BatchInput& batch) override;
  std::vector<float> forward_logits(const SequenceInput& seq) override;
  std::string name() const override { return "cuda"; }

 private:
  class Ops;  // cuda_ops.cpp

  // cuda_forward.cpp
  // Embedding through the last layer; returns the residual exchanges it launched.
  int32_t run_layers(const PackedStep& step);
  // Before a step: clears the residual exchange (with the group) when its count says so.
  void make_room_for_exchanges();
  void run_layers_maybe_graph(const PackedStep& step);
  // Logits of the step's sampled rows into act_.logits (step), or of every row into `all_rows`
  // ([num_tokens, vocab], forward_logits).
  void run_head(const PackedStep& step, std::vector<float>* all_rows);
  // Start-up, so that serving neither tunes nor captures: cuBLASLt timed for every linear
  // layer at the row counts a step can have (before the KV cache takes the free memory: the
  // timing needs scratch operands), then the CUDA graph of every decode bucket.
  void tune_linear_layers();
  // Which way each int4 shape runs at each row bucket past kW4GemmMaxRows (w4_path_plan.h), by
  // timing both on scratch operands after the cuBLASLt tuning (cuda_w4_paths.cpp).
  void choose_w4_paths();
  W4PathPlan w4_paths_;
  // Which layers of 1-2 row decode steps stay on the GEMV (decode_linear_plan.h), by timing the
  // bucket's layers as it will be served (a graph, or eagerly without graphs), before capture.
  void choose_decode_linears();
  double time_decode_layers(int32_t bucket);
  void capture_decode_graphs();
  // The graph of run_layers(step) (after one eager run for the kernels' first launches), and
  // the residual exchanges it runs.
  cudaGraphExec_t capture_layers(const PackedStep& step, int32_t* exchanges);
  std::vector<GemmShape> gemm_shapes() const;
  struct WarmUp {
    double tuning_s = 0, choice_s = 0, graphs_s = 0;
  } warm_up_;
  int32_t decode_splits(int32_t num_tokens) const;
  int32_t graph_bucket(int32_t num_tokens) const;            // 0: no graph for this size
  // Whether a step of num_tokens rows may run the fused GEMV layers (gemv.h) rather than
  // cuBLASLt's: which ones it does is decode_linears_' choice.
  bool fused_decode(int32_t num_tokens) const;
  DecodeLinearPlan decode_linears_;

  // cuda_backend.cpp
  void init(const BackendOptions& options, const ModelConfig& config, const uint64_t* random_seed);
  // With `rules`, the sampling rows' rules are packed too (sampling_rules_state.h).
  PackedStep upload_step(const std::vector<SequenceInput>& seqs, int32_t pad_to, PackedRules* rules = nullptr);
  // The layout a step is packed in: its graph bucket's (pad_to > 0; a captured graph reads its
  // arrays at that layout's offsets) or the full one.
  const StepLayout& step_layout(int32_t pad_to);
  void run_copies(const BatchInput& batch);

  BackendOptions options_;
  RankContext rank_;
  ModelConfig model_config_;  // the model's
  ModelConfig config_;        // what this rank computes: its heads, KV heads and MLP columns
  models::Range vocab_;       // the rank's rows of the embedding and LM head
  int32_t max_model_len_ = 0;
  int32_t max_tokens_ = 0;
  int32_t logit_rows_ = 0;   // rows of logits computed at once
  int32_t num_sms_ = 0;
  int32_t max_splits_ = 1;
  cudaStream_t compute_ = nullptr;
  cudaStream_t copy_ = nullptr;
  cudaEvent_t compute_done_ = nullptr, copies_done_ = nullptr;
  std::unique_ptr<Gemm> gemm_;
  CudaWeightStore weights_;
  std::unique_ptr<models::ModelDefinition> model_;
  std::unique_ptr<KvCache> kv_;
  Activations act_;
  // Tensor parallel: decode steps' residual all-reduce (null: NCCL's all-reduce throughout).
  std::unique_ptr<ResidualExchange> exchange_;
  std::unique_ptr<StepLayout> layout_;  // sized for the largest step: the buffers' size
  std::map<int32_t, StepLayout> bucket_layouts_;
  PinnedBuffer meta_host_;
  PinnedBuffer results_host_;
  std::unique_ptr<LastTokenSlots> slots_;
  std::unique_ptr<SamplingRulesState> rules_;
  std::mt19937_64 rng_;
  // CUDA graphs of run_layers for decode-only steps, by padded token count, all captured by
  // warm_up().
  std::map<int32_t, cudaGraphExec_t> graphs_;
  std::map<int32_t, int32_t> graph_exchanges_;  // residual exchanges each graph runs
};

}  // namespace zinfer::gpu::cuda
