// Preemption under a KV pool too small for the load: recompute and swap produce exactly the token
// streams a large pool produces, and every block comes back.
#include <gtest/gtest.h>

#include <ostream>

#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

struct Case {
  PreemptionMode mode;
  int32_t host_blocks;
  int32_t plans_in_flight;
  bool caching;
};

// gtest prints a parameter's bytes otherwise, padding included.
void PrintTo(const Case& c, std::ostream* os) {
  *os << to_string(c.mode) << " host " << c.host_blocks << " in flight " << c.plans_in_flight
      << (c.caching ? " cache" : " no cache");
}

SchedulerConfig pressure_config(const Case& c, int32_t device_blocks) {
  SchedulerConfig cfg;
  cfg.max_num_batched_tokens = 64;
  cfg.max_num_seqs = 16;
  cfg.max_model_len = 256;
  cfg.num_device_blocks = device_blocks;
  cfg.num_host_blocks = c.host_blocks;
  cfg.preemption = c.mode;
  cfg.max_plans_in_flight = c.plans_in_flight;
  cfg.enable_prefix_caching = c.caching;
  cfg.eos_token_ids = {7, 11};
  return cfg;
}

std::vector<protocol::TokenizedRequest> load() {
  std::vector<protocol::TokenizedRequest> rs;
  for (uint64_t id = 1; id <= 12; ++id) {
    auto r = make_request(id, prompt_of(10 + static_cast<int32_t>(id * 9) % 50, static_cast<int32_t>(id % 5)),
                          20 + static_cast<int32_t>(id * 7) % 40, /*ignore_eos=*/id % 3 != 0);
    rs.push_back(r);
  }
  return rs;
}

class PreemptionTest : public ::testing::TestWithParam<Case> {};

// Invariant 13 (docs/architecture.md): scheduling never changes a token.
TEST_P(PreemptionTest, TinyPoolGivesTheSameTokensAsALargePool) {
  const Case c = GetParam();
  const auto requests = load();

  auto run = [&](int32_t device_blocks, Transcript& t) {
    SchedulerCore core(pressure_config(c, device_blocks));
    FakeExecutor exec(device_blocks, c.host_blocks, 16, kVocab);
    for (const auto& r : requests) t.take(core.add_request(r));
    drive(core, exec, t);
    expect_all_returned(core);
    return core.stats();
  };
  Transcript large, tiny;
  const protocol::Stats large_stats = run(256, large);
  const protocol::Stats tiny_stats = run(8, tiny);  // 8 blocks = 128 tokens for 12 requests
  EXPECT_EQ(large_stats.num_preemptions, 0);
  EXPECT_GT(tiny_stats.num_preemptions, 0);
  for (const auto& r : requests) {
    const auto want = expected_stream(r, 0, {7, 11}, 256, kVocab);
    EXPECT_EQ(large.out(r.request_id), want) << "request " << r.request_id;
    EXPECT_EQ(tiny.out(r.request_id), want) << "request " << r.request_id;
    EXPECT_EQ(tiny.why(r.request_id), large.why(r.request_id)) << "request " << r.request_id;
  }
  if (c.mode == PreemptionMode::kSwap && c.host_blocks > 0) {
    bool swapped = false;
    for (const auto& p : tiny.plans) swapped = swapped || !p.swap_out.empty();
    EXPECT_TRUE(swapped) << "no plan swapped out";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, PreemptionTest,
    ::testing::Values(Case{PreemptionMode::kRecompute, 0, 1, true}, Case{PreemptionMode::kRecompute, 0, 2, true},
                      Case{PreemptionMode::kRecompute, 0, 2, false}, Case{PreemptionMode::kSwap, 64, 1, true},
                      Case{PreemptionMode::kSwap, 64, 2, true}, Case{PreemptionMode::kSwap, 64, 2, false},
                      Case{PreemptionMode::kRecompute, 0, 4, true}, Case{PreemptionMode::kSwap, 64, 4, true},
                      // A host pool too small for most sequences: swap falls back to recompute.
                      Case{PreemptionMode::kSwap, 2, 2, true}),
    [](const ::testing::TestParamInfo<Case>& info) {
      const Case& c = info.param;
      return std::string(to_string(c.mode)) + "_host" + std::to_string(c.host_blocks) + "_inflight" +
             std::to_string(c.plans_in_flight) + (c.caching ? "_cache" : "_nocache");
    });

TEST(Preemption, SwapKeepsComputedTokensAndSwapsBackIn) {
  SchedulerConfig cfg;
  cfg.max_num_batched_tokens = 256;
  cfg.max_num_seqs = 8;
  cfg.max_model_len = 256;
  cfg.num_device_blocks = 4;
  cfg.num_host_blocks = 8;
  cfg.preemption = PreemptionMode::kSwap;
  cfg.max_plans_in_flight = 1;
  SchedulerCore core(cfg);
  FakeExecutor exec(4, 8, 16, kVocab);
  Transcript t;
  // Two 30-token prompts: 2 blocks each fill the pool; the first decode past 32 tokens needs a
  // fifth block, so the later request is swapped out.
  core.add_request(make_request(1, prompt_of(30, 1), 10));
  core.add_request(make_request(2, prompt_of(30, 2), 10));
  bool saw_swap_out = false, saw_swap_in = false;
  DriveOptions opt;
  opt.after_step = [&](SchedulerCore& c, int32_t, Transcript& tr) {
    const auto& p = tr.plans.back();
    if (!p.swap_out.empty()) {
      saw_swap_out = true;
      EXPECT_EQ(c.num_swapped(), 1u);
      EXPECT_EQ(p.swap_out.size(), 2u);
    }
    if (!p.swap_in.empty()) {
      saw_swap_in = true;
      // Swapped back in, it resumes where it was: its next position, no recompute.
      for (const auto& w : p.seqs) {
        if (w.seq_id == 2) {
          EXPECT_EQ(w.num_tokens, 1);
          EXPECT_GT(w.start_pos, 30);
        }
      }
    }
  };
  drive(core, exec, t, opt);
  EXPECT_TRUE(saw_swap_out);
  EXPECT_TRUE(saw_swap_in);
  EXPECT_EQ(t.out(2), expected_stream(make_request(2, prompt_of(30, 2), 10), 0, {}, 256, kVocab));
  expect_all_returned(core);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
