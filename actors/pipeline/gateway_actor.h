// The gateway actor: the OpenAI HTTP server and the ZeroMQ client endpoint (gateway/) in front of
// a ZmqEngineClient. Its own thread reads the pipeline's events and hands them to the requests'
// connections; the HTTP server has its own I/O threads.
#pragma once

#include "runtime/actor.h"
#include "actors/pipeline/engine_config.h"

namespace zinfer::actors {

runtime::ActorBody gateway_actor(const EngineConfig& config);

}  // namespace zinfer::actors
