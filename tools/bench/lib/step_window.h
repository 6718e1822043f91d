// The measurement window of `zinfer-bench scheduler --deployments` (tools/bench/deployment_bench.h):
// decided from the scheduler's periodic Stats alone, so that the bench needs nothing but what the
// scheduler already publishes. The window opens at the first Stats with all R requests running
// and none waiting, and closes at the first Stats at least `min_steps` steps later
// (Stats.steps counts plans made). Stats.generation_tokens counts results applied: with up to
// P plans in flight the two differ by at most P steps at either end, so a window whose tokens
// are not R per step to within that held prefill steps; it is dropped and the next one starts
// where it ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "protocol/messages.h"

namespace zinfer::bench {

struct StatsSample {
  std::chrono::steady_clock::time_point at;  // when the Stats arrived
  protocol::Stats stats;
  int64_t detok_messages = 0;  // messages the detokenizer endpoint had received by then
  int64_t detok_bytes = 0;
};

struct StepWindowResult {
  int64_t steps = 0;
  int64_t tokens = 0;  // generated in the window
  double seconds = 0.0;
  int64_t detok_messages = 0;
  int64_t detok_bytes = 0;
  int64_t generation_tokens_at_end = 0;  // since the requests were admitted
};

class StepWindow {
 public:
  StepWindow(int32_t running, int64_t min_steps, int32_t plans_in_flight = 2)
      : running_(running), min_steps_(min_steps), plans_in_flight_(plans_in_flight) {}

  // Feeds the next Stats; returns the window once it closes. Throws std::runtime_error when,
  // inside an open window, a request stopped running (finished, preempted, swapped out).
  std::optional<StepWindowResult> add(const StatsSample& sample);

  bool is_open() const { return start_.has_value(); }
  int64_t windows_dropped() const { return dropped_; }

 private:
  int32_t running_;
  int64_t min_steps_;
  int32_t plans_in_flight_;
  std::optional<StatsSample> start_;
  int64_t dropped_ = 0;
};

}  // namespace zinfer::bench
