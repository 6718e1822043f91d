// Many random (but seeded, so reproducible) workloads across every configuration axis: each
// sample that is not aborted must produce exactly its scheduler-independent stream, and every
// block must come back.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <set>

#include "harness.h"
#include "random_workload.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 64;  // small: eos/stop ids are hit often

// Invariant 13 (docs/architecture.md): scheduling never changes a token.
TEST(Stress, RandomWorkloadsMatchTheReference) {
  int64_t total_preemptions = 0;
  int64_t compared = 0, stopped = 0, swap_plans = 0, cow_plans = 0, cached = 0, aborts = 0;
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const SchedulerConfig c = random_config(pick);
    SCOPED_TRACE("seed " + std::to_string(seed) + " policy " + c.policy + " mode " + to_string(c.preemption) +
                 " blocks " + std::to_string(c.num_device_blocks) + "x" + std::to_string(c.block_size) + " host " +
                 std::to_string(c.num_host_blocks) + " budget " + std::to_string(c.max_num_batched_tokens) +
                 " seqs " + std::to_string(c.max_num_seqs) + " inflight " + std::to_string(c.max_plans_in_flight) +
                 (c.block_table_deltas ? " deltas" : ""));
    SchedulerCore core(c);
    FakeExecutor exec(c.num_device_blocks, c.num_host_blocks, c.block_size, kVocab);
    Transcript t;
    const std::vector<protocol::TokenizedRequest> rs = random_requests(pick, kVocab);
    // Half the requests arrive at the start, the rest one per step; a few are aborted.
    std::set<uint64_t> aborted;
    size_t next = rs.size() / 2;
    for (size_t i = 0; i < next; ++i) t.take(core.add_request(rs[i]));
    DriveOptions opt;
    opt.after_step = [&](SchedulerCore& core, int32_t step, Transcript& tr) {
      if (next < rs.size()) tr.take(core.add_request(rs[next++]));
      if (step % 19 == 3) {
        uint64_t victim = static_cast<uint64_t>(pick(1, static_cast<int>(next)));
        if (tr.finish.count({victim, 0}) == 0 && !aborted.count(victim)) {
          aborted.insert(victim);
          tr.take(core.abort(victim));
        }
      }
    };
    drive(core, exec, t, opt);
    while (next < rs.size()) {  // the load ran dry before every request arrived
      t.take(core.add_request(rs[next++]));
      drive(core, exec, t);
    }
    for (const auto& r : rs) {
      for (int32_t i = 0; i < r.sampling.n; ++i) {
        const std::string why = t.why(r.request_id, i);
        ASSERT_FALSE(why.empty()) << "request " << r.request_id << " sample " << i << " never finished";
        if (aborted.count(r.request_id)) continue;
        if (why == "error") {
          // Only a request that can never fit is refused.
          const int64_t longest = std::min<int64_t>(static_cast<int64_t>(r.prompt_ids.size()) + r.sampling.max_tokens, 160);
          EXPECT_GT((longest + c.block_size - 1) / c.block_size, c.num_device_blocks) << "request " << r.request_id;
          continue;
        }
        ++compared;
        stopped += why == "stop";
        EXPECT_EQ(t.out(r.request_id, i), expected_stream(r, i, c.eos_token_ids, c.max_model_len, kVocab))
            << "request " << r.request_id << " sample " << i;
      }
    }
    total_preemptions += core.stats().num_preemptions;
    for (const auto& p : t.plans) {
      swap_plans += !p.swap_out.empty();
      cow_plans += !p.copy.empty();
    }
    for (const auto& [id, n] : t.cached_tokens) cached += n > 0;
    aborts += static_cast<int64_t>(aborted.size());
    expect_all_returned(core);
    if (::testing::Test::HasFailure()) break;
  }
  // The workloads must reach every path they are meant to test.
  EXPECT_GT(total_preemptions, 0);
  EXPECT_GT(swap_plans, 0);
  EXPECT_GT(cow_plans, 0);
  EXPECT_GT(cached, 0);
  EXPECT_GT(stopped, 0);
  EXPECT_GT(aborts, 0);
  EXPECT_GT(compared, 300);
  std::printf("stress: %lld samples compared, %lld stopped early, %lld preemptions, %lld swap-out plans, "
              "%lld copy-on-write plans, %lld prefix hits, %lld aborts\n",
              static_cast<long long>(compared), static_cast<long long>(stopped), static_cast<long long>(total_preemptions),
              static_cast<long long>(swap_plans), static_cast<long long>(cow_plans), static_cast<long long>(cached),
              static_cast<long long>(aborts));
}

}  // namespace
}  // namespace zinfer::scheduler::testing
