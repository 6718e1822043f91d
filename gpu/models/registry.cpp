// Architectures by config.json class name, filled by the REGISTER_ARCHITECTURE lines of the
// architecture files before main() runs.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "gpu/models/model_definition.h"

namespace zinfer::gpu::models {
namespace {

std::map<std::string, ModelFactory>& registry() {
  static std::map<std::string, ModelFactory> r;  // built on first use: safe from any initialiser
  return r;
}

}  // namespace

bool register_architecture(const char* architecture, ModelFactory factory) {
  if (!registry().emplace(architecture, factory).second)
    throw std::logic_error(std::string("architecture '") + architecture + "' registered twice");
  return true;
}

bool architecture_known(const std::string& architecture) { return registry().count(architecture) != 0; }

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<ModelDefinition> build_model(const ModelConfig& config, WeightStore& store) {
  auto it = registry().find(config.architecture_name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& n : architecture_names()) known += (known.empty() ? "" : ", ") + n;
    throw ModelConfigError("unsupported architecture '" + config.architecture_name + "' (supported: " + known + ")");
  }
  return it->second(config, store);
}

}  // namespace zinfer::gpu::models
