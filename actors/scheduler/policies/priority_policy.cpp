// Priority: a lower `priority` value runs first; among equals, first come first served (a
// preempted sequence first). The running sequence with the highest value is preempted first.
#include "actors/scheduler/policies/scheduling_policy.h"

#include <tuple>

namespace zinfer::scheduler {

namespace {

class PriorityPolicy final : public SchedulingPolicy {
 public:
  std::string_view name() const override { return "priority"; }
  bool before(const QueueKey& a, const QueueKey& b) const override {
    return std::make_tuple(a.priority, !a.preempted, a.arrival_ns, a.arrival_order) <
           std::make_tuple(b.priority, !b.preempted, b.arrival_ns, b.arrival_order);
  }
};

}  // namespace

std::unique_ptr<SchedulingPolicy> make_priority_policy() { return std::make_unique<PriorityPolicy>(); }

}  // namespace zinfer::scheduler
