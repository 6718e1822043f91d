// Every actor of the pipeline, by the name the config and `zinfer actor NAME` use.
#pragma once

#include "actors/pipeline/engine_config.h"
#include "runtime/supervisor.h"

namespace zinfer::actors {

// tokenizer, scheduler, executor, detokenizer, gateway, each built from `config` (copied) and
// given the options of its own library.
void register_pipeline_actors(runtime::Supervisor& supervisor, const EngineConfig& config);

}  // namespace zinfer::actors
