// Priority: a lower `priority` value runs first; among equals, first come first served (a
// preempted sequence first). The running sequence with the highest value is preempted first.
#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

namespace {

class PriorityPolicy final : public SchedulingPolicy {
 public:
  std::string_view name() const override { return "priority"; }
  SortKey key(const SequenceView& s) const override {
    return {s.priority, s.preempted ? 0 : 1, s.arrival_ns, static_cast<int64_t>(s.arrival_order)};
  }
};

const PolicyRegistrar kRegistrar{"priority", [] { return std::unique_ptr<SchedulingPolicy>(new PriorityPolicy); }};

}  // namespace

}  // namespace zinfer::scheduler
