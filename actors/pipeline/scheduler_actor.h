// The scheduler actor puts SchedulerCore (actors/scheduler/) on sockets:
//   PULL bound at endpoints.scheduler   <- TokenizedRequest (tokenizer), Abort (gateway, detokenizer)
//   DEALER to endpoints.executor        -> StepPlan, ExecutorInfoRequest;  <- StepResult, ExecutorInfo
//   PUSH to endpoints.detokenizer       -> RequestStart, then one TokenDeltaBatch per step
//   PUSH to endpoints.gateway           -> ErrorReply (rejected requests), Stats (every 100 ms)
// At start it asks the executor for the cache geometry and model facts (ExecutorInfo) and is ready
// once it has them. It keeps up to two plans in flight, so step N+1 is planned and queued at the
// executor while step N runs (docs/architecture.md, "Overlap", Invariants 14-15).
// docs/scheduler-protocol.md describes this contract for anyone who writes their own scheduling
// actor.
#pragma once

#include "runtime/actor.h"
#include "actors/pipeline/engine_config.h"

namespace zinfer::actors {

runtime::ActorBody scheduler_actor(const EngineConfig& config);

}  // namespace zinfer::actors
