// A model on the CPU backend: the architecture's definition (gpu/models/) over the CPU weight
// store and ops. Arithmetic is float32; weights are float32 (bf16 checkpoints' matrices stay
// bf16, widened exactly: gpu/cpu/matrix.h).
#pragma once

#include <memory>
#include <vector>

#include "gpu/cpu/cpu_ops.h"
#include "gpu/cpu/cpu_weights.h"
#include "gpu/cpu/kv_cache.h"
#include "gpu/model_config.h"
#include "gpu/models/model_definition.h"
#include "gpu/models/tensor_parallel.h"
#include "gpu/rank_group.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cpu {

class Model {
 public:
  // Throws SafetensorsError for a missing or misshapen tensor, naming it, and ModelConfigError
  // for an architecture no definition is registered for.
  // A rank of a tensor-parallel group loads and computes its shard (gpu/models/tensor_parallel.h).
  Model(const ModelConfig& config, const WeightSet& weights, const RankContext& rank = {});

  const ModelConfig& config() const { return config_; }
  // The config this rank computes with (its heads, KV heads and MLP columns).
  const ModelConfig& local_config() const { return local_; }

  // Runs the batch through all layers, writing each token's K/V into `cache`, and returns the
  // logits of batch.logit_rows: [logit_rows.size(), vocab].
  std::vector<float> forward(const ForwardBatch& batch, KvCache& cache);

 private:
  ModelConfig config_;
  RankContext rank_;
  ModelConfig local_;
  models::Sharding sharding_;
  CpuWeightStore weights_;
  std::unique_ptr<models::ModelDefinition> definition_;
  std::vector<float> inv_freq_;  // [head_dim / 2]
};

}  // namespace zinfer::gpu::cpu
