// Policies by name, for the config.
#include <stdexcept>

#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

std::vector<std::string> policy_names() { return {"fcfs", "priority"}; }

std::unique_ptr<SchedulingPolicy> make_policy(std::string_view name) {
  if (name == "fcfs") return make_fcfs_policy();
  if (name == "priority") return make_priority_policy();
  std::string known;
  for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown scheduling policy '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace zinfer::scheduler
