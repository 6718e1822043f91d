// The fair policy's decisions: the least served tenant goes first, FCFS within a tenant; service
// stays balanced between two and three tenants of unequal load; a tenant arriving late starts
// level with the others (it does not bank credit); one tenant alone is exactly FCFS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>

#include "actors/scheduler/policies/scheduling_policy.h"
#include "harness.h"
#include "protocol/envelope.h"
#include "random_workload.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;
constexpr int32_t kPrompt = 8;
constexpr int32_t kMaxTokens = 8;
// What the model computes for one request: the prompt, then each sampled token but the last.
constexpr int64_t kTokensPerRequest = kPrompt + kMaxTokens - 1;

SchedulerConfig config(const std::string& policy, int32_t max_num_seqs) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 256;
  c.max_num_seqs = max_num_seqs;  // the slots the tenants compete for
  c.max_model_len = 256;
  c.num_device_blocks = 64;
  c.policy = policy;
  c.max_plans_in_flight = 1;
  return c;
}

SequenceView view_of(std::string_view tenant, uint64_t arrival_order, bool preempted = false) {  // tenant: a literal
  SequenceView v;
  v.seq_id = arrival_order + 1;
  v.tenant = tenant;
  v.arrival_order = arrival_order;
  v.preempted = preempted;
  return v;
}

// Tokens computed per tenant after each step, from the plans of a run.
struct Service {
  std::vector<std::map<std::string, int64_t>> after_step;  // cumulative
  std::map<std::string, size_t> last_step;                 // the last step with work of the tenant
};

class TenantRun {
 public:
  TenantRun(const std::string& policy, int32_t max_num_seqs) : core_(config(policy, max_num_seqs)) {}

  // Queues `count` requests of `tenant`.
  void add(const std::string& tenant, int count) {
    for (int i = 0; i < count; ++i) {
      const uint64_t id = next_id_++;
      auto r = make_request(id, prompt_of(kPrompt, static_cast<int32_t>(id)), kMaxTokens);
      r.tenant = tenant;
      tenant_of_[id] = tenant;  // one sample per request: sequence id = request id
      t_.take(core_.add_request(r));
    }
  }

  // Runs to the end; `after_step` may add requests.
  Service run(const std::function<void(TenantRun&, int32_t step)>& after_step = {}) {
    FakeExecutor exec(64, 0, 16, kVocab);
    DriveOptions opt;
    if (after_step) opt.after_step = [&](SchedulerCore&, int32_t step, Transcript&) { after_step(*this, step); };
    drive(core_, exec, t_, opt);
    EXPECT_TRUE(t_.errors.empty());
    expect_all_returned(core_);
    Service s;
    std::map<std::string, int64_t> served;
    for (size_t i = 0; i < t_.plans.size(); ++i) {
      for (const auto& w : t_.plans[i].seqs) {
        const std::string& tenant = tenant_of_.at(w.seq_id);
        served[tenant] += w.num_tokens;
        s.last_step[tenant] = i;
      }
      s.after_step.push_back(served);
    }
    return s;
  }

 private:
  SchedulerCore core_;
  Transcript t_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::string> tenant_of_;
};

// The largest difference in service between any two of `tenants` over the steps in which each of
// them still had work, counting from step `from` (service received before it subtracted).
int64_t worst_imbalance(const Service& s, const std::vector<std::string>& tenants, size_t from = 0) {
  size_t end = s.after_step.size();
  for (const auto& t : tenants) end = std::min(end, s.last_step.at(t));
  auto at = [&](size_t step, const std::string& t) {
    auto it = s.after_step[step].find(t);
    return it == s.after_step[step].end() ? int64_t{0} : it->second;
  };
  int64_t worst = 0;
  for (size_t i = from; i < end; ++i) {
    for (const auto& a : tenants) {
      for (const auto& b : tenants) {
        const int64_t base_a = from == 0 ? 0 : at(from - 1, a), base_b = from == 0 ? 0 : at(from - 1, b);
        worst = std::max(worst, (at(i, a) - base_a) - (at(i, b) - base_b));
      }
    }
  }
  return worst;
}

TEST(FairPolicy, TheLeastServedTenantGoesFirst) {
  auto fair = make_policy("fair");
  const SequenceView a0 = view_of("a", 0), a1 = view_of("a", 1), b2 = view_of("b", 2);
  for (const auto* v : {&a0, &a1, &b2}) fair->on_arrival(*v);
  EXPECT_LT(fair->key(a0), fair->key(a1));  // nobody served yet: first come, first served
  EXPECT_LT(fair->key(a1), fair->key(b2));
  const uint64_t version = fair->state_version();
  fair->on_served(a0, 10);
  EXPECT_NE(fair->state_version(), version);  // the scheduler must re-key its queues
  EXPECT_LT(fair->key(b2), fair->key(a1));    // b, served less, overtakes a
  EXPECT_LT(fair->key(a0), fair->key(a1));    // within a tenant: still FCFS
  EXPECT_LT(fair->key(view_of("a", 5, /*preempted=*/true)), fair->key(a1));  // a preempted one first
  fair->on_served(b2, 10);
  EXPECT_LT(fair->key(a1), fair->key(b2));  // level again: the older goes first
}

TEST(FairPolicy, ATenantArrivingLateStartsLevelWithTheOthers) {
  auto fair = make_policy("fair");
  const SequenceView a0 = view_of("a", 0), b1 = view_of("b", 1);
  fair->on_arrival(a0);
  fair->on_arrival(b1);
  fair->on_served(a0, 100);
  fair->on_served(b1, 60);
  // c was never served: it is raised to the least served active tenant (b, 60), so it does not
  // take every slot until it has caught up with 60 tokens.
  const SequenceView c2 = view_of("c", 2);
  fair->on_arrival(c2);
  EXPECT_EQ(fair->key(c2)[0], 60);
  EXPECT_LT(fair->key(b1), fair->key(c2));  // level with b: FCFS between them
  EXPECT_LT(fair->key(c2), fair->key(a0));
  // b leaves, c is served 30 more, b comes back: it does not keep its 60 (credit for its
  // absence) but is raised to the least served active tenant, c (90; a has 100) ...
  fair->on_departure(b1);
  fair->on_served(c2, 30);  // c 90, a 100
  const SequenceView b3 = view_of("b", 3);
  fair->on_arrival(b3);
  EXPECT_EQ(fair->key(b3)[0], 90);
  // ... and once nobody is left, every counter is forgotten.
  for (const auto* v : {&a0, &c2, &b3}) fair->on_departure(*v);
  const SequenceView a4 = view_of("a", 4);
  fair->on_arrival(a4);
  EXPECT_EQ(fair->key(a4)[0], 0);
}

TEST(FairPolicy, TwoTenantsOfUnequalLoadShareTheService) {
  // Tenant a queues 12 requests before tenant b queues 4; 2 slots. Under FCFS b waits for
  // almost all of a's; under fair share the service stays within one request per slot.
  auto imbalance = [](const std::string& policy) {
    TenantRun run(policy, 2);
    run.add("a", 12);
    run.add("b", 4);
    return worst_imbalance(run.run(), {"a", "b"});
  };
  EXPECT_LE(imbalance("fair"), 2 * kTokensPerRequest);
  EXPECT_GT(imbalance("fcfs"), 8 * kTokensPerRequest);  // the measure tells the policies apart
}

TEST(FairPolicy, ThreeTenantsOfUnequalLoadShareTheService) {
  auto imbalance = [](const std::string& policy) {
    TenantRun run(policy, 3);
    run.add("a", 15);
    run.add("b", 6);
    run.add("c", 3);
    return worst_imbalance(run.run(), {"a", "b", "c"});
  };
  EXPECT_LE(imbalance("fair"), 3 * kTokensPerRequest);
  EXPECT_GT(imbalance("fcfs"), 10 * kTokensPerRequest);
}

TEST(FairPolicy, ATenantArrivingLateGetsItsShareNotMore) {
  // a and b compete for 60 steps, then c arrives with as much work as b has left. From then on
  // each of the three gets about a third: c is not owed the 60 steps it was absent.
  constexpr int32_t kArrival = 60;
  TenantRun run("fair", 2);
  run.add("a", 20);
  run.add("b", 20);
  const Service s = run.run([](TenantRun& r, int32_t step) {
    if (step == kArrival) r.add("c", 8);
  });
  EXPECT_LE(worst_imbalance(s, {"a", "b", "c"}, kArrival), 2 * kTokensPerRequest);
  EXPECT_GT(s.after_step.at(kArrival).at("a"), 4 * kTokensPerRequest);  // there was history to bank
}

// One tenant alone: every decision is FCFS's, step by step, preemptions and swaps included.
TEST(FairPolicy, OneTenantIsFirstComeFirstServed) {
  int runs_with_preemption = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::vector<std::string> encoded[2];
    int64_t preemptions = 0;
    for (int which = 0; which < 2; ++which) {
      std::mt19937 rng(seed);
      auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
      SchedulerConfig c = random_config(pick);
      c.policy = which == 0 ? "fcfs" : "fair";
      SchedulerCore core(c);
      FakeExecutor exec(c.num_device_blocks, c.num_host_blocks, c.block_size, 64);
      Transcript t;
      for (auto r : random_requests(pick, 64)) {
        r.tenant = "solo";
        t.take(core.add_request(r));
      }
      drive(core, exec, t);
      for (const auto& p : t.plans) encoded[which].push_back(protocol::encode(p));
      preemptions = core.stats().num_preemptions;
    }
    ASSERT_EQ(encoded[0], encoded[1]) << "seed " << seed;
    if (preemptions > 0) ++runs_with_preemption;
  }
  EXPECT_GT(runs_with_preemption, 10);  // the victims were compared too
}

}  // namespace
}  // namespace zinfer::scheduler::testing
