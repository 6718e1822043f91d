// Abort at any moment: waiting, running, in flight, swapped, before the fork of n > 1 samples.
#include <gtest/gtest.h>

#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig abort_config() {
  SchedulerConfig c;
  c.max_num_batched_tokens = 64;
  c.max_num_seqs = 8;
  c.max_model_len = 256;
  c.num_device_blocks = 16;
  c.num_host_blocks = 16;
  return c;
}

TEST(Abort, WaitingRequestEndsWithAbort) {
  SchedulerCore core(abort_config());
  core.add_request(make_request(1, prompt_of(10, 1), 5));
  Transcript t;
  t.take(core.abort(1));
  EXPECT_EQ(t.why(1), "abort");
  EXPECT_TRUE(t.out(1).empty());
  expect_all_returned(core);
  EXPECT_FALSE(core.schedule().has_value());
  EXPECT_TRUE(core.abort(1).empty()) << "a second abort of a finished request says nothing";
  EXPECT_TRUE(core.abort(77).empty());
}

// Invariant 2 (docs/architecture.md): requests are the gateway's until handed on; a client that goes away becomes an Abort.
TEST(Abort, WhileInFlightFreesBlocksAndDropsTheLateResult) {
  SchedulerCore core(abort_config());
  core.add_request(make_request(1, prompt_of(40, 1), 20));
  core.add_request(make_request(2, prompt_of(12, 2), 6));
  FakeExecutor exec(16, 16, 16, kVocab);
  Transcript t;
  auto p1 = core.schedule();
  auto p2 = core.schedule();
  ASSERT_TRUE(p1 && p2);
  t.take(core.abort(1, ""));  // empty reason: "abort"
  EXPECT_EQ(t.why(1), "abort");
  EXPECT_FALSE(core.kv().has(p1->seqs[0].seq_id));
  t.take(core.postprocess(exec.run(*p1)));  // request 1's tokens are not reported
  t.take(core.postprocess(exec.run(*p2)));
  EXPECT_TRUE(t.out(1).empty());
  drive(core, exec, t);
  EXPECT_EQ(t.out(2), expected_stream(make_request(2, prompt_of(12, 2), 6), 0, {}, 256, kVocab));
  bool told_executor = false;
  for (const auto& p : t.plans) {
    for (uint64_t id : p.finished) told_executor = told_executor || id == p1->seqs[0].seq_id;
  }
  EXPECT_TRUE(told_executor);
  expect_all_returned(core);
}

TEST(Abort, MidGenerationKeepsWhatWasSent) {
  SchedulerCore core(abort_config());
  core.add_request(make_request(1, prompt_of(10, 1), 50));
  FakeExecutor exec(16, 16, 16, kVocab);
  Transcript t;
  DriveOptions opt;
  opt.after_step = [](SchedulerCore& c, int32_t step, Transcript& tr) {
    if (step == 5) tr.take(c.abort(1, "stop"));  // e.g. the detokenizer found a stop string
  };
  drive(core, exec, t, opt);
  EXPECT_EQ(t.why(1), "stop");
  EXPECT_EQ(t.out(1).size(), 5u);
  expect_all_returned(core);
}

TEST(Abort, SwappedAndForkPendingSamples) {
  auto c = abort_config();
  c.num_device_blocks = 4;
  c.preemption = PreemptionMode::kSwap;
  SchedulerCore core(c);
  FakeExecutor exec(4, 16, 16, kVocab);
  Transcript t;
  core.add_request(make_request(1, prompt_of(30, 1), 20));
  core.add_request(make_request(2, prompt_of(30, 2), 20));
  auto three = make_request(3, prompt_of(20, 3), 4);
  three.sampling.n = 3;
  core.add_request(three);
  DriveOptions opt;
  opt.after_step = [](SchedulerCore& core, int32_t, Transcript& tr) {
    if (core.num_swapped() > 0 && core.num_requests() == 3) {
      tr.take(core.abort(2));
      tr.take(core.abort(3));  // still waiting; samples 1 and 2 not forked yet
    }
  };
  drive(core, exec, t, opt);
  EXPECT_EQ(t.why(2), "abort");
  for (int32_t i = 0; i < 3; ++i) EXPECT_EQ(t.why(3, i), "abort") << "sample " << i;
  EXPECT_EQ(t.why(1), "length");
  EXPECT_EQ(t.out(1), expected_stream(make_request(1, prompt_of(30, 1), 20), 0, {}, 256, kVocab));
  expect_all_returned(core);
}

TEST(Abort, OneSampleOfSeveralEndsAloneTheOthersGoOn) {
  // A stop string found in sample 1 ends sample 1 only (the detokenizer's Abort with an index).
  SchedulerCore core(abort_config());
  FakeExecutor exec(16, 16, 16, kVocab);
  Transcript t;
  auto req = make_request(1, prompt_of(20, 1), 12);
  req.sampling.n = 3;
  core.add_request(req);
  DriveOptions opt;
  bool done = false;
  opt.after_step = [&](SchedulerCore& core, int32_t, Transcript& tr) {
    if (!done && tr.out(1, 1).size() >= 3) {
      tr.take(core.abort(1, "stop", 1));
      done = true;
    }
  };
  drive(core, exec, t, opt);
  ASSERT_TRUE(done);
  EXPECT_EQ(t.why(1, 1), "stop");
  EXPECT_LT(t.out(1, 1).size(), 12u);
  for (int32_t i : {0, 2}) {
    EXPECT_EQ(t.why(1, i), "length") << "sample " << i;
    EXPECT_EQ(t.out(1, i), expected_stream(req, i, {}, 256, kVocab)) << "sample " << i;
  }
  expect_all_returned(core);
}

// Invariant 26 (docs/architecture.md): a failed step fails only its plan's requests.
TEST(Abort, FailedStepFailsItsRequestsOnly) {
  SchedulerCore core(abort_config());
  core.add_request(make_request(1, prompt_of(10, 1), 5));
  EXPECT_EQ(core.oldest_in_flight_step(), 0u);
  auto p1 = core.schedule();
  core.add_request(make_request(2, prompt_of(10, 2), 5));
  auto p2 = core.schedule();
  ASSERT_TRUE(p2);
  EXPECT_EQ(core.oldest_in_flight_step(), p1->step_id);
  protocol::StepResult failed;
  failed.step_id = core.oldest_in_flight_step();
  failed.error = "device lost";
  Transcript t;
  t.take(core.postprocess(failed));
  EXPECT_EQ(t.why(1), "error");
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].request_id, 1u);
  EXPECT_NE(t.errors[0].message.find("device lost"), std::string::npos);
  EXPECT_EQ(core.oldest_in_flight_step(), p2->step_id);
  FakeExecutor exec(16, 16, 16, kVocab);
  exec.run(*p1);  // the executor's view: step 1 ran (its result was lost)
  t.take(core.postprocess(exec.run(*p2)));
  drive(core, exec, t);
  EXPECT_EQ(t.why(2), "length");
  EXPECT_EQ(t.out(2), expected_stream(make_request(2, prompt_of(10, 2), 5), 0, {}, 256, kVocab));
  expect_all_returned(core);
}

TEST(Stats, CountersFollowTheWork) {
  SchedulerCore core(abort_config());
  FakeExecutor exec(16, 16, 16, kVocab);
  Transcript t;
  core.add_request(make_request(1, prompt_of(40, 1), 7));
  core.add_request(make_request(2, prompt_of(40, 1), 3));
  auto st = core.stats();
  EXPECT_EQ(st.waiting, 2);
  EXPECT_EQ(st.num_gpu_blocks, 16);
  EXPECT_EQ(st.num_cpu_blocks, 16);
  drive(core, exec, t);
  st = core.stats();
  EXPECT_EQ(st.prompt_tokens, 80);
  EXPECT_EQ(st.generation_tokens, 10);
  EXPECT_EQ(st.running, 0);
  EXPECT_EQ(st.free_gpu_blocks, 16);
  EXPECT_EQ(st.kv_usage, 0.0);
  EXPECT_GT(st.steps, 0);
  EXPECT_EQ(st.steps, static_cast<int64_t>(t.plans.size()));
}

}  // namespace
}  // namespace zinfer::scheduler::testing
