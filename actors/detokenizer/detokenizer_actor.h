// The detokenizer actor: TokenDeltas (from the scheduler, after a RequestStart for the request;
// a step's deltas as one TokenDeltaBatch, or one TokenDelta at a time from a scheduler that
// sends them singly, e.g. examples/python/scheduler.py) in, TextDelta (to the gateway) out.
// Incremental, UTF-8-safe detokenization per sample; stop strings: the text never includes the
// stop string, and the sample ends at once (an Abort with reason "stop" goes back to the
// scheduler so the sample's blocks are freed).
//
// Sockets: PULL bound at endpoints.detokenizer; PUSH to endpoints.gateway and to
// endpoints.scheduler. Without a tokenizer.json in the model folder, text stays empty (token ids
// still flow: `generate --prompt-ids` needs no tokenizer).
#pragma once

#include "runtime/actor.h"
#include <string>

#include "runtime/runtime_config.h"

namespace zinfer::actors {

// Detokenizes with model_dir/tokenizer.json; serves endpoints.detokenizer.
runtime::ActorBody detokenizer_actor(std::string model_dir, runtime::EndpointsConfig endpoints);

}  // namespace zinfer::actors
