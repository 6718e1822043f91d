// What the scheduler core hands to its actor to send on: RequestStart messages go out before the
// TokenDeltas (same socket, in this order), errors to whoever submitted the request.
#pragma once

#include <vector>

#include "protocol/messages.h"

namespace zinfer::scheduler {

struct SchedulerOutput {
  std::vector<protocol::RequestStart> starts;
  std::vector<protocol::TokenDelta> deltas;
  std::vector<protocol::ErrorReply> errors;  // a rejected request: why (its deltas say "error")

  bool empty() const { return starts.empty() && deltas.empty() && errors.empty(); }
};

}  // namespace zinfer::scheduler
