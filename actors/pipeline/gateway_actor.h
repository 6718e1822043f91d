// The gateway actor: the OpenAI HTTP server and the ZeroMQ client endpoint (gateway/) in front of
// a ZmqEngineClient. Its own thread reads the pipeline's events and hands them to the requests'
// connections; the HTTP server has its own I/O threads.
#pragma once

#include "runtime/actor.h"
#include "runtime/config.h"

namespace zinfer::actors {

runtime::ActorBody gateway_actor(const runtime::Config& config);
std::string served_model_name(const runtime::Config& config);

}  // namespace zinfer::actors
