// First come, first served. A preempted sequence goes back to the front of the queue (it was
// admitted before anything still waiting, and finishing it frees its blocks soonest).
#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

namespace {

class FcfsPolicy final : public SchedulingPolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
  SortKey key(const SequenceView& s) const override {
    return {s.preempted ? 0 : 1, s.arrival_ns, static_cast<int64_t>(s.arrival_order), 0};
  }
};

const PolicyRegistrar kRegistrar{"fcfs", [] { return std::unique_ptr<SchedulingPolicy>(new FcfsPolicy); }};

}  // namespace

}  // namespace zinfer::scheduler
