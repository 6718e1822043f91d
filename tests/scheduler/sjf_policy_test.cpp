// The sjf policy's decisions: shortest predicted remaining output first, the prediction over
// max_tokens, ties first come first served, aging bounding how often a sequence is overtaken,
// preemption of the longest job, and no jump to the front for a preempted sequence.
#include <gtest/gtest.h>

#include <algorithm>

#include "actors/scheduler/policies/scheduling_policy.h"
#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;
// sjf_policy.cpp's aging: each later arrival adds this many tokens to a sequence's key.
constexpr int64_t kAgingTokens = 16;

SchedulerConfig one_at_a_time() {
  SchedulerConfig c;
  c.max_num_batched_tokens = 256;
  c.max_num_seqs = 1;  // one sequence per step: the admission order is the order of service
  c.max_model_len = 256;
  c.num_device_blocks = 64;
  c.policy = "sjf";
  c.max_plans_in_flight = 1;
  return c;
}

// Runs the requests (queued before the first step) and returns their order of service.
std::vector<uint64_t> service_order(const std::vector<protocol::TokenizedRequest>& requests) {
  SchedulerCore core(one_at_a_time());
  for (const auto& r : requests) {
    Transcript ignored;
    ignored.take(core.add_request(r));
    EXPECT_TRUE(ignored.errors.empty()) << "request " << r.request_id << ": " << ignored.errors.front().message;
  }
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  drive(core, exec, t);
  expect_all_returned(core);
  // One sample per request, added in order: sequence ids are request ids.
  return first_planned_order(t);
}

protocol::TokenizedRequest request(uint64_t id, int32_t max_tokens, int32_t predicted = 0) {
  auto r = make_request(id, prompt_of(8, static_cast<int32_t>(id)), max_tokens);
  r.predicted_output_tokens = predicted;
  return r;
}

SequenceView view_of(int32_t max_tokens, int32_t generated, uint64_t arrival_order, bool preempted = false) {
  SequenceView v;
  v.max_tokens = max_tokens;
  v.generated_tokens = generated;
  v.arrival_order = arrival_order;
  v.preempted = preempted;
  return v;
}

TEST(SjfPolicy, ServesTheShortestJobFirst) {
  // Keys (remaining + 16 per earlier arrival): 200, 36, 132, 68.
  EXPECT_EQ(service_order({request(1, 200), request(2, 20), request(3, 100), request(4, 20)}),
            (std::vector<uint64_t>{2, 4, 3, 1}));
}

TEST(SjfPolicy, ThePredictionGoesBeforeMaxTokens) {
  // 1: no prediction, 30; 2: predicted 5 of 200; 3: predicted 250, more than its max_tokens 100
  // (the limit wins). Keys 30, 21, 132 (by max_tokens alone: 1, 3, 2).
  EXPECT_EQ(service_order({request(1, 30), request(2, 200, 5), request(3, 100, 250)}),
            (std::vector<uint64_t>{2, 1, 3}));
  auto sjf = make_policy("sjf");
  SequenceView predicted = view_of(200, 10, 0);
  predicted.predicted_output_tokens = 40;
  EXPECT_EQ(sjf->key(predicted)[0], 30);  // 40 predicted - 10 generated
  predicted.generated_tokens = 60;        // it outlived its prediction: about to finish
  EXPECT_EQ(sjf->key(predicted)[0], 1);
  EXPECT_EQ(sjf->key(view_of(200, 150, 0))[0], 50);  // no prediction: max_tokens - generated
}

TEST(SjfPolicy, EqualKeysGoFirstComeFirstServed) {
  // 36 remaining arriving first and 20 arriving one later have equal keys (36 = 20 + 16).
  EXPECT_EQ(service_order({request(1, 36), request(2, 20)}), (std::vector<uint64_t>{1, 2}));
  // The gateway's clock orders them as FCFS does: request 2 was received first.
  auto early = request(2, 20), late = request(1, 36);
  late.arrival_ns = 2000;
  early.arrival_ns = 1000;
  EXPECT_EQ(service_order({late, early}), (std::vector<uint64_t>{2, 1}));
}

TEST(SjfPolicy, AgingBoundsHowOftenALongJobIsOvertaken) {
  // A long job (200 tokens), then 40 one-token jobs: pure SJF would serve it last. A job
  // arriving d requests later overtakes it only while 1 + 16 d < 200, i.e. for d <= 12.
  std::vector<protocol::TokenizedRequest> rs{request(1, 200)};
  for (uint64_t id = 2; id <= 41; ++id) rs.push_back(request(id, 1));
  const auto order = service_order(rs);
  ASSERT_EQ(order.size(), 41u);
  const auto pos = std::find(order.begin(), order.end(), 1u) - order.begin();
  EXPECT_EQ(pos, 12);
  for (long i = 0; i < pos; ++i) EXPECT_LE(order[static_cast<size_t>(i)], 13u) << "overtaken by a job that came too late";
  // The bound for any length: remaining tokens compare capped at 4096, so nothing that arrives
  // 256 or more requests later goes first, even with a single token to do.
  auto sjf = make_policy("sjf");
  const SequenceView longest = view_of(1'000'000, 0, 1000);
  EXPECT_LT(sjf->key(view_of(1, 0, 1000 + 255)), sjf->key(longest));
  EXPECT_GT(sjf->key(view_of(1, 0, 1000 + 256)), sjf->key(longest));
  EXPECT_EQ(sjf->key(view_of(5000, 0, 7))[0], 4096 + 7 * kAgingTokens);
}

TEST(SjfPolicy, APreemptedSequenceKeepsItsPlace) {
  auto sjf = make_policy("sjf");
  EXPECT_EQ(sjf->key(view_of(50, 10, 3, /*preempted=*/true)), sjf->key(view_of(50, 10, 3, false)));
  // A shorter job that waits goes before a preempted longer one (FCFS would put it behind).
  EXPECT_LT(sjf->key(view_of(20, 0, 4)), sjf->key(view_of(50, 10, 3, true)));
}

TEST(SjfPolicy, PreemptsTheJobWithTheMostLeft) {
  SchedulerConfig c = one_at_a_time();
  c.max_num_seqs = 8;
  c.num_device_blocks = 6;  // 3 sequences of 2 blocks each fill the pool
  SchedulerCore core(c);
  // 30 prompt tokens: 2 blocks, a third at 33. Predicted 60, 10, 5 of 60: request 1, the oldest,
  // has the most left (keys about 57, 23, 34 when the pool runs out), although FCFS and
  // priority would both evict request 3.
  const int32_t predicted[] = {60, 10, 5};
  for (uint64_t id = 1; id <= 3; ++id) {
    auto r = make_request(id, prompt_of(30, static_cast<int32_t>(id)), 60);
    r.predicted_output_tokens = predicted[id - 1];
    core.add_request(r);
  }
  FakeExecutor exec(6, 0, 16, kVocab);
  Transcript t;
  for (int step = 0; step < 50 && core.stats().num_preemptions == 0; ++step) {
    auto p = core.schedule();
    ASSERT_TRUE(p);
    t.take(core.postprocess(exec.run(*p)));
  }
  ASSERT_EQ(core.stats().num_preemptions, 1);
  ASSERT_EQ(core.num_waiting(), 1u);
  auto next = core.schedule();
  ASSERT_TRUE(next);
  std::vector<uint64_t> ids;
  for (const auto& w : next->seqs) ids.push_back(w.seq_id);
  EXPECT_EQ(ids, (std::vector<uint64_t>{2, 3}));
  t.take(core.postprocess(exec.run(*next)));
  drive(core, exec, t);
  for (uint64_t id = 1; id <= 3; ++id) {
    EXPECT_EQ(t.out(id), expected_stream(make_request(id, prompt_of(30, static_cast<int32_t>(id)), 60), 0, {}, 256, kVocab));
  }
  expect_all_returned(core);
}

TEST(SjfPolicy, RefusesANegativePrediction) {
  SchedulerCore core(one_at_a_time());
  Transcript t;
  t.take(core.add_request(request(1, 10, -1)));
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].code, 400);
  EXPECT_NE(t.errors[0].message.find("predicted_output_tokens"), std::string::npos);
  EXPECT_EQ(t.why(1), "error");
  EXPECT_FALSE(core.has_unfinished());
}

}  // namespace
}  // namespace zinfer::scheduler::testing
