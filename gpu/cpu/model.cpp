#include "gpu/cpu/model.h"

#include "gpu/rope.h"

namespace zinfer::gpu::cpu {

namespace {
models::TensorParallel tp_of(const RankContext& rank) { return {rank.rank, rank.size()}; }
}  // namespace

Model::Model(const ModelConfig& config, const WeightSet& checkpoint, const RankContext& rank)
    : config_(config), rank_(rank), local_(models::local_config(config, tp_of(rank))),
      sharding_(models::shard(config, tp_of(rank))), weights_(checkpoint, config.quantization, tp_of(rank)),
      definition_(models::build_model(config_, weights_)),
      inv_freq_(rope_inv_freq(config_)) {
  weights_.finish_loading();
}

std::vector<float> Model::forward(const ForwardBatch& batch, KvCache& cache) {
  CpuForwardOps ops(local_, sharding_.vocab, rank_, weights_, inv_freq_, batch, cache);
  definition_->layers(ops);
  definition_->head(ops);
  return std::move(ops.result());
}

}  // namespace zinfer::gpu::cpu
