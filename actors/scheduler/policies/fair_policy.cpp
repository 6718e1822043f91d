// Fair share across tenants (the request's `tenant`: the OpenAI `user`, later the API key): the
// tenant that has been served the fewest tokens goes first; within a tenant, first come, first
// served (a preempted sequence first). Service is every token the model computed for a tenant's
// sequences, prompt chunks and decodes alike. The running sequence of the most-served tenant is
// preempted first. With a single tenant this is FCFS.
//
// Service counts only while tenants compete (the virtual token counter of "Fairness in Serving
// Large Language Models", Sheng et al., 2024): a tenant that becomes active (its first live
// sequence) has its counter raised to the least served active tenant's, so neither a long
// absence banks credit to starve the others with, nor does service received while nobody else
// waited count against it later; and when no sequence is left at all, every counter is forgotten.
// The policy orders admission and chooses preemption victims; it does not stop a running sequence
// to let another tenant in, so the balance is kept at admission (and grows tighter the more
// sequences come and go).
#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

namespace {

class FairPolicy final : public SchedulingPolicy {
 public:
  std::string_view name() const override { return "fair"; }

  SortKey key(const SequenceView& s) const override {
    auto it = tenants_.find(s.tenant);
    const int64_t served = it == tenants_.end() ? 0 : it->second.served;
    return {served, s.preempted ? 0 : 1, s.arrival_ns, static_cast<int64_t>(s.arrival_order)};
  }

  void on_arrival(const SequenceView& s) override {
    Tenant& t = tenants_[std::string(s.tenant)];
    if (t.live == 0 && num_active_ > 0) t.served = std::max(t.served, least_served_active());
    if (t.live++ == 0) ++num_active_;
    // No state_changed(): only this tenant's counter moved, and it had nothing queued.
  }

  bool counts_service() const override { return true; }

  void on_served(const SequenceView& s, int32_t num_tokens) override {
    auto it = tenants_.find(s.tenant);
    if (it == tenants_.end() || num_tokens <= 0) return;
    it->second.served += num_tokens;
    state_changed();
  }

  void on_departure(const SequenceView& s) override {
    auto it = tenants_.find(s.tenant);
    if (it == tenants_.end() || it->second.live == 0) return;
    if (--it->second.live > 0) return;
    if (--num_active_ == 0) {
      tenants_.clear();
    } else if (tenants_.size() > 2 * num_active_ + kSpareIdleTenants) {
      forget_idle_tenants();
    }
  }

 private:
  struct Tenant {
    int64_t served = 0;  // tokens computed for it (raised on becoming active)
    int32_t live = 0;    // its sequences not yet departed
  };

  // Idle tenants kept beyond twice the active ones before a sweep: a sweep costs one pass.
  static constexpr size_t kSpareIdleTenants = 64;

  int64_t least_served_active() const {
    int64_t least = std::numeric_limits<int64_t>::max();
    for (const auto& [name, t] : tenants_) {
      if (t.live > 0) least = std::min(least, t.served);
    }
    return least;
  }

  // An idle tenant at or below the least served active one would be raised to it on its return
  // anyway: its entry tells nothing. (The `user` field is the client's: without this, every
  // distinct value would stay in memory.)
  void forget_idle_tenants() {
    const int64_t least = least_served_active();
    std::erase_if(tenants_, [&](const auto& entry) { return entry.second.live == 0 && entry.second.served <= least; });
  }

  std::map<std::string, Tenant, std::less<>> tenants_;
  size_t num_active_ = 0;
};

const PolicyRegistrar kRegistrar{"fair", [] { return std::unique_ptr<SchedulingPolicy>(new FairPolicy); }};

}  // namespace

}  // namespace zinfer::scheduler
