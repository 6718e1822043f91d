// A model architecture written once against the ops (forward_ops.h) and run by every backend.
// Each architecture is one file in gpu/models/ that registers itself under the class names of
// config.json's "architectures" (REGISTER_ARCHITECTURE below); gpu/CMakeLists.txt links this
// folder whole so that no registration is dropped by the static linker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/model_config.h"
#include "gpu/models/forward_ops.h"
#include "gpu/models/weight_store.h"

namespace zinfer::gpu::models {

class ModelDefinition {
 public:
  virtual ~ModelDefinition() = default;
  // The embedding through the last layer: leaves the residual stream for head(). A CUDA backend
  // captures this part in its decode graphs.
  virtual void layers(ForwardOps& ops) const = 0;
  // The final norm and the LM head of the rows that get logits.
  virtual void head(ForwardOps& ops) const = 0;
};

// Declares the architecture's weights in `store` and returns its definition; throws for what the
// config asks and the architecture cannot do, naming the field.
using ModelFactory = std::unique_ptr<ModelDefinition> (*)(const ModelConfig& config, WeightStore& store);

// For static initialisers: returns true. Registering a name twice throws std::logic_error.
bool register_architecture(const char* architecture, ModelFactory factory);

// The definition for config.architecture_name; ModelConfigError naming the known ones otherwise.
std::unique_ptr<ModelDefinition> build_model(const ModelConfig& config, WeightStore& store);
bool architecture_known(const std::string& architecture);
std::vector<std::string> architecture_names();  // sorted

}  // namespace zinfer::gpu::models

#define ZINFER_MODELS_CONCAT2(a, b) a##b
#define ZINFER_MODELS_CONCAT(a, b) ZINFER_MODELS_CONCAT2(a, b)
// REGISTER_ARCHITECTURE("LlamaForCausalLM", make_llama);
#define REGISTER_ARCHITECTURE(name, factory)                                                      \
  [[maybe_unused]] static const bool ZINFER_MODELS_CONCAT(registered_architecture_, __LINE__) = \
      ::zinfer::gpu::models::register_architecture(name, factory)
