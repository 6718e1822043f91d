// The tokenizer actor: GenerateRequest in (PULL bound at endpoints.tokenizer), TokenizedRequest
// out to the scheduler, ErrorReply out to the gateway for requests that cannot run. The actor's
// thread only forwards frames to `tokenizer.workers` worker threads (so a long prompt does not
// hold up the others); each worker tokenizes and sends on.
#pragma once

#include "runtime/actor.h"
#include "actors/pipeline/engine_config.h"

namespace zinfer::actors {

runtime::ActorBody tokenizer_actor(const EngineConfig& config);

}  // namespace zinfer::actors
