#include "tools/bench/lib/step_window.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace zinfer::bench {

std::optional<StepWindowResult> StepWindow::add(const StatsSample& sample) {
  const protocol::Stats& s = sample.stats;
  if (!start_) {
    if (s.running == running_ && s.waiting == 0) start_ = sample;
    return std::nullopt;
  }
  if (s.running != running_ || s.waiting != 0 || s.swapped != 0 || s.num_preemptions != start_->stats.num_preemptions) {
    throw std::runtime_error("a request left the running set during the window (running " + std::to_string(s.running) +
                             " of " + std::to_string(running_) + ", waiting " + std::to_string(s.waiting) +
                             ", swapped " + std::to_string(s.swapped) + ", preemptions " +
                             std::to_string(s.num_preemptions - start_->stats.num_preemptions) + ")");
  }
  const int64_t steps = s.steps - start_->stats.steps;
  if (steps < min_steps_) return std::nullopt;
  const int64_t tokens = s.generation_tokens - start_->stats.generation_tokens;
  if (std::llabs(tokens - int64_t(running_) * steps) > int64_t(plans_in_flight_) * running_) {
    start_ = sample;
    ++dropped_;
    return std::nullopt;
  }
  StepWindowResult r;
  r.steps = steps;
  r.tokens = tokens;
  r.seconds = std::chrono::duration<double>(sample.at - start_->at).count();
  r.detok_messages = sample.detok_messages - start_->detok_messages;
  r.detok_bytes = sample.detok_bytes - start_->detok_bytes;
  r.generation_tokens_at_end = s.generation_tokens;
  return r;
}

}  // namespace zinfer::bench
