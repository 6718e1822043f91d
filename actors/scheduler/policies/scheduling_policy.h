// The order in which the scheduler serves sequences: which waiting sequence is admitted next and
// which running one is preempted first (the one served last). One policy per file; the config
// names one (`policy = "fcfs"`), make_policy builds it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::scheduler {

// What a policy may look at. The fields do not change while a sequence sits in a queue.
struct QueueKey {
  int32_t priority = 0;        // the request's; lower is more urgent
  int64_t arrival_ns = 0;      // the gateway's clock (0 when unknown)
  uint64_t arrival_order = 0;  // order of arrival at the scheduler
  bool preempted = false;      // it ran before and was evicted
};

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  virtual std::string_view name() const = 0;
  // True when `a` is served before `b`: a strict weak order (the caller breaks ties).
  virtual bool before(const QueueKey& a, const QueueKey& b) const = 0;
};

std::unique_ptr<SchedulingPolicy> make_fcfs_policy();      // fcfs_policy.cpp
std::unique_ptr<SchedulingPolicy> make_priority_policy();  // priority_policy.cpp

// The policy called `name`; throws std::invalid_argument listing the known names otherwise.
std::unique_ptr<SchedulingPolicy> make_policy(std::string_view name);
std::vector<std::string> policy_names();

}  // namespace zinfer::scheduler
