// SchedulerCore::recycle only lends memory to later plans and deltas: over the stress test's
// random workloads (random_workload.h: chunked prefill, n > 1 forks, preemption by swap and
// recompute, prefix hits, copy-on-write, aborts, several plans in flight, block-table deltas on
// and off, both policies) a core whose plans are handed back
// makes exactly the plans, byte for byte, and the outputs of one whose plans are not (the deltas
// are handed back too, so a difference in them would show in the transcripts).
#include <gtest/gtest.h>

#include <random>

#include "harness.h"
#include "random_workload.h"
#include "protocol/envelope.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 64;

struct WorkloadRun {
  std::vector<std::string> plans;  // encoded
  Transcript transcript;
  int64_t preemptions = 0;
};

WorkloadRun run_workload(uint32_t seed, bool recycle) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const SchedulerConfig c = random_config(pick);
  SchedulerCore core(c);
  FakeExecutor exec(c.num_device_blocks, c.num_host_blocks, c.block_size, kVocab);
  WorkloadRun run;
  const std::vector<protocol::TokenizedRequest> rs = random_requests(pick, kVocab);
  size_t next = rs.size() / 2;
  for (size_t i = 0; i < next; ++i) run.transcript.take(core.add_request(rs[i]));
  DriveOptions opt;
  opt.recycle = recycle;
  opt.after_step = [&](SchedulerCore& core, int32_t step, Transcript& tr) {
    if (next < rs.size()) tr.take(core.add_request(rs[next++]));
    if (step % 13 == 5) tr.take(core.abort(static_cast<uint64_t>(step % static_cast<int>(next) + 1)));
  };
  drive(core, exec, run.transcript, opt);
  while (next < rs.size()) {
    run.transcript.take(core.add_request(rs[next++]));
    drive(core, exec, run.transcript, opt);
  }
  for (const auto& p : run.transcript.plans) run.plans.push_back(protocol::encode(p));
  run.preemptions = core.stats().num_preemptions;
  expect_all_returned(core);
  return run;
}

// Invariant 16 (docs/architecture.md): recycled memory is invisible.
TEST(Recycle, PlansAndOutputsAreTheSameWithAndWithout) {
  int64_t preemptions = 0;
  size_t plans = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const WorkloadRun kept = run_workload(seed, /*recycle=*/false);
    const WorkloadRun recycled = run_workload(seed, /*recycle=*/true);
    ASSERT_EQ(recycled.plans.size(), kept.plans.size());
    for (size_t i = 0; i < kept.plans.size(); ++i) ASSERT_EQ(recycled.plans[i], kept.plans[i]) << "plan " << i;
    EXPECT_EQ(recycled.transcript.tokens, kept.transcript.tokens);
    EXPECT_EQ(recycled.transcript.finish, kept.transcript.finish);
    EXPECT_EQ(recycled.transcript.cached_tokens, kept.transcript.cached_tokens);
    preemptions += kept.preemptions;
    plans += kept.plans.size();
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(preemptions, 0);  // the workloads reach preemption (records reused across it)
  EXPECT_GT(plans, 1000u);
}

// Invariant 16 (docs/architecture.md): recycled memory is invisible.
// A plan handed back while another is still in flight (the actor recycles on send): the plan in
// flight keeps its own memory.
TEST(Recycle, APlanInFlightIsNotTouched) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 64;
  c.max_num_seqs = 4;
  c.max_model_len = 128;
  c.num_device_blocks = 64;
  c.max_plans_in_flight = 2;
  SchedulerCore core(c);
  for (uint64_t id = 1; id <= 3; ++id) core.add_request(make_request(id, prompt_of(20, static_cast<int32_t>(id)), 8));
  auto first = core.schedule();
  ASSERT_TRUE(first);
  const std::string first_bytes = protocol::encode(*first);
  auto second = core.schedule();
  ASSERT_TRUE(second);
  const std::string second_bytes = protocol::encode(*second);
  core.recycle(std::move(*first));
  EXPECT_EQ(protocol::encode(*second), second_bytes);
  FakeExecutor exec(c.num_device_blocks, c.num_host_blocks, c.block_size, kVocab);
  core.postprocess(exec.run(protocol::decode<protocol::StepPlan>(first_bytes)));
  auto third = core.schedule();  // reuses the first plan's records
  ASSERT_TRUE(third);
  EXPECT_EQ(protocol::encode(*second), second_bytes);
  EXPECT_EQ(third->seqs.size(), 3u);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
