// Shortest job first on the predicted remaining output: a sequence's remaining tokens are its
// predicted output length (the request's `predicted_output_tokens`, or a predictor's) less what
// it generated, or, without a prediction, its max_tokens less what it generated. Short jobs
// first minimise the mean time to completion; the running sequence with the most remaining is
// preempted first. A preempted sequence keeps its place by the same rule (no jump to the front).
//
// Aging, so that a long job is not overtaken forever: each later arrival at the scheduler adds
// kAgingTokens to a sequence's key, so a sequence is overtaken only by sequences that arrived
// fewer than (its remaining tokens) / kAgingTokens requests after it, and remaining tokens are
// capped at kRemainingCap for the comparison: no sequence is overtaken by kMaxOvertakers or more
// later arrivals. Counting arrivals rather than time scales the aging with the load (and keeps
// every key fixed while a sequence waits). Equal keys go first come, first served.
#include <algorithm>

#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

namespace {

constexpr int64_t kMaxOvertakers = 256;
constexpr int64_t kRemainingCap = 4096;  // longer jobs compare as equally long
constexpr int64_t kAgingTokens = kRemainingCap / kMaxOvertakers;

class SjfPolicy final : public SchedulingPolicy {
 public:
  std::string_view name() const override { return "sjf"; }
  SortKey key(const SequenceView& s) const override {
    // A sequence that outlived its prediction is taken to be about to finish (1 token left):
    // preempting it would throw away the most work.
    const int32_t expected = s.predicted_output_tokens ? std::min(*s.predicted_output_tokens, s.max_tokens) : s.max_tokens;
    const int64_t remaining = std::clamp<int64_t>(int64_t{expected} - s.generated_tokens, 1, kRemainingCap);
    const int64_t aged = remaining + kAgingTokens * static_cast<int64_t>(s.arrival_order);
    return {aged, s.arrival_ns, static_cast<int64_t>(s.arrival_order), 0};
  }
};

const PolicyRegistrar kRegistrar{"sjf", [] { return std::unique_ptr<SchedulingPolicy>(new SjfPolicy); }};

}  // namespace

}  // namespace zinfer::scheduler
