// Overlap: step N+1 is planned before step N's result is known.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig overlap_config(int32_t in_flight) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 128;
  c.max_num_seqs = 8;
  c.max_model_len = 256;
  c.num_device_blocks = 64;
  c.max_plans_in_flight = in_flight;
  return c;
}

// Invariant 5 (docs/architecture.md): the last sampled token stays on the executor.
TEST(Overlap, SecondPlanFeedsTheTokenInFlight) {
  SchedulerCore core(overlap_config(2));
  core.add_request(make_request(1, prompt_of(20, 1), 5));
  auto p1 = core.schedule();
  auto p2 = core.schedule();
  ASSERT_TRUE(p1 && p2);
  EXPECT_FALSE(core.schedule().has_value()) << "a third plan while two are in flight";
  ASSERT_EQ(p2->seqs.size(), 1u);
  const auto& w = p2->seqs[0];
  EXPECT_TRUE(w.use_last_sampled);
  EXPECT_TRUE(w.token_ids.empty());
  EXPECT_EQ(w.num_tokens, 1);
  EXPECT_EQ(w.start_pos, 20);
  EXPECT_EQ(w.sample_index, 1);
  EXPECT_EQ(w.block_table.size(), 2u);  // the slot of position 20 was allocated
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  t.take(core.postprocess(exec.run(*p1)));
  EXPECT_TRUE(core.schedule().has_value());  // room again
}

// Invariant 15 (docs/architecture.md): overlap changes no token.
TEST(Overlap, SameTokensAsWithoutOverlapIncludingEarlyStops) {
  std::vector<protocol::TokenizedRequest> rs;
  for (uint64_t id = 1; id <= 10; ++id) {
    rs.push_back(make_request(id, prompt_of(5 + static_cast<int32_t>(id) * 11, static_cast<int32_t>(id)), 40,
                              /*ignore_eos=*/false));
  }
  // eos ids that some of these streams hit early (the 3rd token of some requests).
  std::vector<int32_t> eos;
  for (uint64_t id = 2; id <= 10; id += 3) eos.push_back(expected_stream(rs[id - 1], 0, {}, 256, kVocab).at(2));
  std::map<int32_t, Transcript> runs;
  for (int32_t in_flight : {1, 2, 4}) {
    auto c = overlap_config(in_flight);
    c.eos_token_ids = eos;
    SchedulerCore core(c);
    FakeExecutor exec(64, 0, 16, kVocab);
    for (const auto& r : rs) core.add_request(r);
    drive(core, exec, runs[in_flight]);
    expect_all_returned(core);
    // Finished ids travel with the next plan: after one more request only its own state is left.
    core.add_request(make_request(99, prompt_of(4, 9), 2));
    Transcript extra;
    drive(core, exec, extra);
    EXPECT_EQ(exec.num_tracked_sequences(), 1u) << "finished ids never reached the executor";
    if (in_flight > 1) {
      EXPECT_GT(exec.num_use_last_sampled(), 0);
    }
  }
  int stopped_early = 0;
  for (const auto& r : rs) {
    const auto want = expected_stream(r, 0, eos, 256, kVocab);
    EXPECT_EQ(runs[1].out(r.request_id), want) << "request " << r.request_id;
    EXPECT_EQ(runs[2].out(r.request_id), want) << "request " << r.request_id;
    EXPECT_EQ(runs[4].out(r.request_id), want) << "request " << r.request_id;
    EXPECT_EQ(runs[1].why(r.request_id), runs[2].why(r.request_id));
    EXPECT_EQ(runs[1].why(r.request_id), runs[4].why(r.request_id));
    stopped_early += runs[2].why(r.request_id) == "stop";
  }
  EXPECT_GE(stopped_early, 3);
}

// Invariant 15 (docs/architecture.md): overlap changes no token.
TEST(Overlap, EosFinishDropsTheNextStepsTokenAndFreesAtOnce) {
  auto r = make_request(1, prompt_of(20, 3), 30, /*ignore_eos=*/false);
  const int32_t eos = expected_stream(r, 0, {}, 256, kVocab).at(0);  // the very first token
  auto c = overlap_config(2);
  c.eos_token_ids = {eos};
  SchedulerCore core(c);
  core.add_request(r);
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto p1 = core.schedule();
  auto p2 = core.schedule();  // assumes p1's token is not the last
  ASSERT_TRUE(p2);
  t.take(core.postprocess(exec.run(*p1)));
  EXPECT_EQ(t.why(1), "stop");
  EXPECT_EQ(t.out(1), std::vector<int32_t>{eos});
  EXPECT_EQ(core.kv().num_sequences(), 0u) << "blocks not freed when the result showed the finish";
  auto late = core.postprocess(exec.run(*p2));  // the token computed in p2 is dropped
  EXPECT_TRUE(late.deltas.empty());
  core.add_request(make_request(2, prompt_of(8, 4), 1));
  auto p3 = core.schedule();
  ASSERT_TRUE(p3);
  EXPECT_EQ(p3->finished, std::vector<uint64_t>{p1->seqs[0].seq_id});
}

// Invariant 14 (docs/architecture.md): plans run one at a time, in order.
TEST(Overlap, DeeperPipelineFeedsEachPlanThePreviousPlansToken) {
  SchedulerCore core(overlap_config(4));
  const auto r = make_request(1, prompt_of(20, 1), 10);
  core.add_request(r);
  std::vector<protocol::StepPlan> plans;
  for (int i = 0; i < 4; ++i) {
    auto p = core.schedule();
    ASSERT_TRUE(p) << "plan " << i;
    plans.push_back(std::move(*p));
  }
  EXPECT_FALSE(core.schedule().has_value()) << "a fifth plan while four are in flight";
  for (int32_t i = 1; i < 4; ++i) {
    const auto& w = plans[static_cast<size_t>(i)].seqs.at(0);
    EXPECT_TRUE(w.use_last_sampled);
    EXPECT_EQ(w.start_pos, 19 + i);
    EXPECT_EQ(w.sample_index, i);
  }
  EXPECT_EQ(plans[3].seqs[0].block_table.size(), 2u);  // position 22 is in the second block
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  for (const auto& p : plans) t.take(core.postprocess(exec.run(p)));
  const auto want = expected_stream(r, 0, {}, 256, kVocab);
  EXPECT_EQ(t.out(1), std::vector<int32_t>(want.begin(), want.begin() + 4));
}

// Invariant 15 (docs/architecture.md): overlap changes no token.
TEST(Overlap, EosWithThreePlansInFlightDropsBothLaterTokens) {
  auto r = make_request(1, prompt_of(20, 3), 30, /*ignore_eos=*/false);
  const int32_t eos = expected_stream(r, 0, {}, 256, kVocab).at(0);
  auto c = overlap_config(3);
  c.eos_token_ids = {eos};
  SchedulerCore core(c);
  core.add_request(r);
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto p1 = core.schedule();
  auto p2 = core.schedule();
  auto p3 = core.schedule();
  ASSERT_TRUE(p1 && p2 && p3);
  t.take(core.postprocess(exec.run(*p1)));
  EXPECT_EQ(t.out(1), std::vector<int32_t>{eos});
  EXPECT_EQ(core.kv().num_sequences(), 0u);
  EXPECT_TRUE(core.postprocess(exec.run(*p2)).deltas.empty());
  EXPECT_TRUE(core.postprocess(exec.run(*p3)).deltas.empty());
  EXPECT_FALSE(core.has_unfinished());
}

TEST(Overlap, MaxTokensNeedsNoWastedStep) {
  SchedulerCore core(overlap_config(2));
  core.add_request(make_request(1, prompt_of(20, 1), 1));
  auto p1 = core.schedule();
  ASSERT_TRUE(p1);
  EXPECT_FALSE(core.schedule().has_value()) << "planned work past max_tokens";
}

TEST(Overlap, ChunkedPrefillContinuesWhileTheFirstChunkRuns) {
  auto c = overlap_config(2);
  c.max_num_batched_tokens = 16;
  SchedulerCore core(c);
  core.add_request(make_request(1, prompt_of(40, 1), 3));
  auto p1 = core.schedule();
  auto p2 = core.schedule();
  ASSERT_TRUE(p1 && p2);
  EXPECT_EQ(p1->seqs[0].start_pos, 0);
  EXPECT_EQ(p2->seqs[0].start_pos, 16);
  EXPECT_FALSE(p2->seqs[0].use_last_sampled);
  EXPECT_FALSE(p1->seqs[0].sample);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
