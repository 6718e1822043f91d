// What a scheduling policy may know of a sequence: a read-only copy of the facts it orders by.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zinfer::scheduler {

// The view of a sequence waiting in a queue does not change while it waits (nothing is planned
// for it; a token in flight that arrives moves from "in flight" to "known", and generated_tokens
// counts both), so a key computed from it stays valid until the policy's own state changes.
struct SequenceView {
  uint64_t seq_id = 0;
  int32_t prompt_tokens = 0;
  int32_t computed_tokens = 0;   // positions whose KV is written or planned (0 after a recompute preemption)
  int32_t generated_tokens = 0;  // tokens sampled so far, counting those in flight
  int32_t max_tokens = 0;        // the request's limit on generated tokens
  int32_t priority = 0;          // the request's; lower is more urgent
  int64_t arrival_ns = 0;        // the gateway's clock (0 when unknown)
  uint64_t arrival_order = 0;    // order of arrival at the scheduler (samples of a request share it)
  bool preempted = false;        // it ran before and was evicted
  std::string_view tenant;       // who asked (the OpenAI `user`); empty for anonymous requests.
                                 // Valid while the sequence lives: a policy that keeps it copies it.
  std::optional<int32_t> predicted_output_tokens;  // >= 1: the request's (or a predictor's) guess
};

}  // namespace zinfer::scheduler
