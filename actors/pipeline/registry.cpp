#include "actors/pipeline/registry.h"

#include "actors/detokenizer/detokenizer_actor.h"
#include "actors/executor/executor_actor.h"
#include "actors/pipeline/gateway_actor.h"
#include "actors/pipeline/scheduler_actor.h"
#include "actors/pipeline/tokenizer_actor.h"

namespace zinfer::actors {

void register_pipeline_actors(runtime::Supervisor& supervisor) {
  supervisor.register_actor("executor", executor_actor);
  supervisor.register_actor("detokenizer", detokenizer_actor);
  supervisor.register_actor("scheduler", scheduler_actor);
  supervisor.register_actor("tokenizer", tokenizer_actor);
  supervisor.register_actor("gateway", gateway_actor);
}

}  // namespace zinfer::actors
