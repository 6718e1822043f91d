#include "gpu/cpu/model.h"

#include "gpu/rope.h"

namespace zinfer::gpu::cpu {

Model::Model(const ModelConfig& config, const WeightSet& checkpoint, const RankContext& rank)
    : config_(config), rank_(rank), local_(models::local_config(config, rank.parallel())),
      sharding_(models::shard(config, rank.parallel())), weights_(checkpoint, config.quantization, rank.parallel()),
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
