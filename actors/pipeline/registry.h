// Every actor of the pipeline, by the name the config and `zinfer actor NAME` use.
#pragma once

#include "runtime/supervisor.h"

namespace zinfer::actors {

// tokenizer, scheduler, executor, detokenizer, gateway.
void register_pipeline_actors(runtime::Supervisor& supervisor);

}  // namespace zinfer::actors
