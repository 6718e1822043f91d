// The order in which the scheduler serves sequences: which waiting sequence is admitted next and
// which running one is preempted first (the one served last). One policy per file, which
// registers itself by name (PolicyRegistrar); the config names one (`policy = "fcfs"`),
// make_policy builds it.
//
// A policy maps a sequence's view to a key; queues are served in increasing key, ties to the
// older sequence id. The key may also depend on state the policy keeps (fair share: how much
// each tenant was served), which the scheduler feeds through the on_* events; whenever that
// state changes in a way that may reorder sequences, the policy calls state_changed() and the
// scheduler recomputes the keys of its queues before it next reads them (once per step).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/scheduler/policies/sequence_view.h"

namespace zinfer::scheduler {

// A sequence's place in line, compared lexicographically: the lower one is served first.
using SortKey = std::array<int64_t, 4>;

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  virtual std::string_view name() const = 0;
  // A pure function of the view and the policy's state.
  virtual SortKey key(const SequenceView& s) const = 0;

  // Events, for a policy with state; the default ignores them. Every sequence gets on_arrival
  // once (when its request is queued), on_served for each step result that computed tokens for
  // it (prompt chunks and decodes alike), and on_departure once (finished, aborted or failed).
  virtual void on_arrival(const SequenceView& s) {}
  virtual void on_served(const SequenceView& s, int32_t num_tokens) {}
  virtual void on_departure(const SequenceView& s) {}
  // Whether the policy wants on_served: it is called for every sequence of every step, so the
  // scheduler skips building those views for a policy that does not count service.
  virtual bool counts_service() const { return false; }

  // Bumped by state_changed(); the scheduler re-keys its queues when it moved.
  uint64_t state_version() const { return state_version_; }

 protected:
  void state_changed() { ++state_version_; }

 private:
  uint64_t state_version_ = 0;
};

using PolicyFactory = std::unique_ptr<SchedulingPolicy> (*)();

// Registers a policy under `name` when its file's static object is constructed:
//   const PolicyRegistrar kRegistrar{"fcfs", [] { return std::unique_ptr<SchedulingPolicy>(...); }};
// A name registered twice is a programming error (std::logic_error at start-up). The policy
// files are linked as objects (actors/scheduler/CMakeLists.txt), so no registrar is dropped.
struct PolicyRegistrar {
  PolicyRegistrar(std::string_view name, PolicyFactory make);
};

// The policy called `name`; throws std::invalid_argument listing the known names otherwise.
std::unique_ptr<SchedulingPolicy> make_policy(std::string_view name);
// Every registered name, sorted.
std::vector<std::string> policy_names();

}  // namespace zinfer::scheduler
