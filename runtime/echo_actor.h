// A small actor that answers Ping with Pong and echoes BenchPayload, over a ROUTER socket, and
// answers any frame it cannot decode with an ErrorReply while it keeps serving. Used by the
// runtime's tests, by `zinfer-bench runtime`, and as a liveness probe of the runtime.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "runtime/actor.h"

namespace zinfer::runtime {

struct EchoCounters {
  std::atomic<uint64_t> served{0};
  std::atomic<uint64_t> bad_frames{0};
};

// The body of an echo actor bound at `endpoint`. `counters` may be null.
ActorBody echo_actor(std::string endpoint, std::shared_ptr<EchoCounters> counters = nullptr);

// The body of a sink actor: a PULL socket bound at `endpoint` that counts the frames it receives.
ActorBody sink_actor(std::string endpoint, std::shared_ptr<std::atomic<uint64_t>> received);

}  // namespace zinfer::runtime
