// n > 1: the samples share the prompt's blocks, copy the shared partial block on write, and each
// produces what a single request with its seed would.
#include <gtest/gtest.h>

#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig n_config(int32_t device_blocks, int32_t in_flight) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 64;
  c.max_num_seqs = 16;
  c.max_model_len = 256;
  c.num_device_blocks = device_blocks;
  c.max_plans_in_flight = in_flight;
  return c;
}

protocol::TokenizedRequest sampled_request(uint64_t id, int32_t prompt_len, int32_t n, int32_t max_tokens) {
  auto r = make_request(id, prompt_of(prompt_len, static_cast<int32_t>(id)), max_tokens);
  r.sampling.n = n;
  r.sampling.temperature = 0.8f;
  r.sampling.seed = 1000 + static_cast<int64_t>(id);
  return r;
}

// Invariant 13 (docs/architecture.md): scheduling never changes a token.
TEST(ParallelSampling, SamplesShareThePromptAndMatchSingleRuns) {
  for (int32_t in_flight : {1, 2, 3}) {
    SchedulerCore core(n_config(64, in_flight));
    FakeExecutor exec(64, 0, 16, kVocab);
    Transcript t;
    auto r = sampled_request(1, 37, 3, 12);  // prompt: 2 full blocks + 5 tokens
    core.add_request(r);
    DriveOptions opt;
    bool checked_sharing = false;
    opt.after_step = [&](SchedulerCore& c, int32_t, Transcript& tr) {
      if (checked_sharing) return;
      for (const auto& p : tr.plans) {
        if (p.seqs.size() != 3) continue;
        // The first step of the samples: the same first 2 blocks, copies for the shared last one.
        EXPECT_EQ(p.seqs[0].block_table[0], p.seqs[1].block_table[0]);
        EXPECT_EQ(p.seqs[1].block_table[1], p.seqs[2].block_table[1]);
        EXPECT_EQ(p.copy.size(), 2u);  // two samples copy, the last owner writes in place
        for (const auto& w : p.seqs) {
          EXPECT_EQ(w.start_pos, 36);
          EXPECT_TRUE(w.sample);
        }
        checked_sharing = true;
        break;
      }
    };
    drive(core, exec, t, opt);
    EXPECT_TRUE(checked_sharing) << "no step ran the 3 samples together";
    for (int32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(t.out(1, i), expected_stream(r, i, {}, 256, kVocab)) << "sample " << i;
      EXPECT_EQ(t.why(1, i), "length");
    }
    EXPECT_NE(t.out(1, 0), t.out(1, 1));
    expect_all_returned(core);
  }
}

TEST(ParallelSampling, PromptIsComputedOnce) {
  SchedulerCore core(n_config(64, 1));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  core.add_request(sampled_request(1, 50, 4, 3));
  drive(core, exec, t);
  int32_t prompt_tokens_fed = 0;
  for (const auto& p : t.plans) {
    for (const auto& w : p.seqs) {
      if (w.start_pos < 50) prompt_tokens_fed += w.num_tokens;
    }
  }
  // 49 tokens once, then the last prompt token by each of the 4 samples.
  EXPECT_EQ(prompt_tokens_fed, 49 + 4);
}

TEST(ParallelSampling, OneTokenPromptAndBlockAlignedPrompt) {
  for (int32_t len : {1, 17, 33}) {
    SchedulerCore core(n_config(64, 2));
    FakeExecutor exec(64, 0, 16, kVocab);
    Transcript t;
    auto r = sampled_request(1, len, 3, 5);
    core.add_request(r);
    drive(core, exec, t);
    for (int32_t i = 0; i < 3; ++i) EXPECT_EQ(t.out(1, i), expected_stream(r, i, {}, 256, kVocab)) << len << "/" << i;
    expect_all_returned(core);
  }
}

TEST(ParallelSampling, UnderMemoryPressureWithPrefixCache) {
  for (PreemptionMode mode : {PreemptionMode::kRecompute, PreemptionMode::kSwap}) {
    auto c = n_config(10, 2);
    c.preemption = mode;
    c.num_host_blocks = 32;
    SchedulerCore core(c);
    FakeExecutor exec(10, 32, 16, kVocab);
    Transcript t;
    std::vector<protocol::TokenizedRequest> rs;
    for (uint64_t id = 1; id <= 4; ++id) rs.push_back(sampled_request(id, 20 + 5 * static_cast<int32_t>(id), 3, 30));
    for (const auto& r : rs) core.add_request(r);
    drive(core, exec, t);
    EXPECT_GT(core.stats().num_preemptions, 0);
    for (const auto& r : rs) {
      for (int32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(t.out(r.request_id, i), expected_stream(r, i, {}, 256, kVocab))
            << to_string(mode) << " request " << r.request_id << " sample " << i;
      }
    }
    expect_all_returned(core);
  }
}

}  // namespace
}  // namespace zinfer::scheduler::testing
