// What the scheduler core hands to its actor to send on: RequestStart messages go out before the
// TokenDeltas (same socket, in this order), errors to whoever submitted the request.
#pragma once

#include <iterator>
#include <vector>

#include "protocol/messages.h"

namespace zinfer::scheduler {

struct SchedulerOutput {
  std::vector<protocol::RequestStart> starts;
  std::vector<protocol::TokenDelta> deltas;
  std::vector<protocol::ErrorReply> errors;  // a rejected request: why (its deltas say "error")
  // Whole prompts' logprobs (prompt_logprobs), each sent before its request's first delta.
  std::vector<protocol::PromptLogprobs> prompt_logprobs;

  bool empty() const { return starts.empty() && deltas.empty() && errors.empty() && prompt_logprobs.empty(); }

  // Appends a later output: starts still precede every delta of their request when sent.
  void append(SchedulerOutput&& later) {
    starts.insert(starts.end(), std::make_move_iterator(later.starts.begin()), std::make_move_iterator(later.starts.end()));
    deltas.insert(deltas.end(), std::make_move_iterator(later.deltas.begin()), std::make_move_iterator(later.deltas.end()));
    errors.insert(errors.end(), std::make_move_iterator(later.errors.begin()), std::make_move_iterator(later.errors.end()));
    prompt_logprobs.insert(prompt_logprobs.end(), std::make_move_iterator(later.prompt_logprobs.begin()),
                           std::make_move_iterator(later.prompt_logprobs.end()));
  }
};

}  // namespace zinfer::scheduler
