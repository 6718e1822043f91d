#include "gpu/cpu/model.h"

#include "gpu/rope.h"

namespace zinfer::gpu::cpu {

Model::Model(const ModelConfig& config, const WeightSet& checkpoint)
    : config_(config), weights_(checkpoint), definition_(models::build_model(config_, weights_)),
      inv_freq_(rope_inv_freq(config_)) {
  weights_.finish_loading();
}

std::vector<float> Model::forward(const ForwardBatch& batch, KvCache& cache) {
  CpuForwardOps ops(config_, weights_, inv_freq_, batch, cache);
  definition_->layers(ops);
  definition_->head(ops);
  return std::move(ops.result());
}

}  // namespace zinfer::gpu::cpu
