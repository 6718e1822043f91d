#include "actors/pipeline/registry.h"

#include "actors/detokenizer/detokenizer_actor.h"
#include "actors/executor/executor_actor.h"
#include "actors/pipeline/gateway_actor.h"
#include "actors/pipeline/scheduler_actor.h"
#include "actors/pipeline/tokenizer_actor.h"

namespace zinfer::actors {

void register_pipeline_actors(runtime::Supervisor& supervisor, const EngineConfig& config) {
  supervisor.register_actor("executor", [config] { return executor_actor(backend_options(config), config.endpoints); });
  supervisor.register_actor("detokenizer", [config] { return detokenizer_actor(config.backend.model_dir, config.endpoints); });
  supervisor.register_actor("scheduler", [config] { return scheduler_actor(config); });
  supervisor.register_actor("tokenizer", [config] { return tokenizer_actor(config); });
  supervisor.register_actor("gateway", [config] { return gateway_actor(config); });
}

bool is_pipeline_actor(const std::string& name) {
  for (const char* n : {"tokenizer", "scheduler", "executor", "detokenizer", "gateway"}) {
    if (name == n) return true;
  }
  return false;
}

std::map<std::string, std::vector<std::string>> pipeline_restart_groups() {
  return {{"scheduler", {"executor", "detokenizer"}}};
}

}  // namespace zinfer::actors
