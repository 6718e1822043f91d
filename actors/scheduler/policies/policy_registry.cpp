// Policies by name, filled by each policy file's PolicyRegistrar before main() runs.
#include <map>
#include <stdexcept>

#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

namespace {

// Built on first use: the registrars of other files run during static initialisation, in an
// order the language leaves open.
std::map<std::string, PolicyFactory, std::less<>>& registry() {
  static std::map<std::string, PolicyFactory, std::less<>> policies;
  return policies;
}

}  // namespace

PolicyRegistrar::PolicyRegistrar(std::string_view name, PolicyFactory make) {
  if (!registry().emplace(std::string(name), make).second) {
    throw std::logic_error("scheduling policy '" + std::string(name) + "' is registered twice");
  }
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<SchedulingPolicy> make_policy(std::string_view name) {
  auto it = registry().find(name);
  if (it != registry().end()) return it->second();
  std::string known;
  for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown scheduling policy '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace zinfer::scheduler
