// First come, first served. A preempted sequence goes back to the front of the queue (it was
// admitted before anything still waiting, and finishing it frees its blocks soonest).
#include "actors/scheduler/policies/scheduling_policy.h"

#include <tuple>

namespace zinfer::scheduler {

namespace {

class FcfsPolicy final : public SchedulingPolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
  bool before(const QueueKey& a, const QueueKey& b) const override {
    return std::make_tuple(!a.preempted, a.arrival_ns, a.arrival_order) <
           std::make_tuple(!b.preempted, b.arrival_ns, b.arrival_order);
  }
};

}  // namespace

std::unique_ptr<SchedulingPolicy> make_fcfs_policy() { return std::make_unique<FcfsPolicy>(); }

}  // namespace zinfer::scheduler
