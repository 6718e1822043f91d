// Stop conditions and the requests refused at the door.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "actors/scheduler/stop_conditions.h"
#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig config_with_eos(std::vector<int32_t> eos) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 128;
  c.max_num_seqs = 8;
  c.max_model_len = 64;
  c.num_device_blocks = 32;
  c.eos_token_ids = std::move(eos);
  return c;
}

TEST(StopConditions, Rules) {
  protocol::SamplingParams sp;
  sp.max_tokens = 5;
  sp.stop_token_ids = {9};
  const std::vector<int32_t> eos = {2};
  EXPECT_EQ(finish_reason_after(2, 1, 10, sp, eos, 100), "stop");
  EXPECT_EQ(finish_reason_after(9, 1, 10, sp, eos, 100), "stop");
  EXPECT_EQ(finish_reason_after(3, 1, 10, sp, eos, 100), "");
  EXPECT_EQ(finish_reason_after(3, 5, 10, sp, eos, 100), "length");
  EXPECT_EQ(finish_reason_after(3, 1, 100, sp, eos, 100), "length");
  sp.ignore_eos = true;
  EXPECT_EQ(finish_reason_after(2, 1, 10, sp, eos, 100), "");
  EXPECT_EQ(finish_reason_after(9, 1, 10, sp, eos, 100), "stop");  // stop ids still apply
  sp.ignore_eos = false;
  sp.min_tokens = 3;
  EXPECT_EQ(finish_reason_after(2, 2, 10, sp, eos, 100), "");
  EXPECT_EQ(finish_reason_after(2, 3, 10, sp, eos, 100), "stop");
}

// Picks, for a prompt, the token the fake produces at a given output index, so that a stop on it
// is exercised end to end.
int32_t token_at(const protocol::TokenizedRequest& r, size_t i) {
  auto free_run = expected_stream(r, 0, {}, 1 << 20, kVocab);
  return free_run.at(i);
}

TEST(StopConditions, EosEndsTheRequestWithTheTokenIncluded) {
  auto r = make_request(1, prompt_of(12, 1), 20, /*ignore_eos=*/false);
  const int32_t eos = token_at(r, 3);
  SchedulerCore core(config_with_eos({eos}));
  core.add_request(r);
  FakeExecutor exec(32, 0, 16, kVocab);
  Transcript t;
  drive(core, exec, t);
  auto want = expected_stream(r, 0, {eos}, 64, kVocab);
  EXPECT_EQ(t.out(1, 0), want);
  EXPECT_EQ(t.out(1, 0).back(), eos);
  EXPECT_LE(t.out(1, 0).size(), 4u);
  EXPECT_EQ(t.why(1, 0), "stop");
  expect_all_returned(core);
}

TEST(StopConditions, IgnoreEosRunsToMaxTokens) {
  auto r = make_request(1, prompt_of(12, 1), 20, /*ignore_eos=*/true);
  const int32_t eos = token_at(r, 3);
  SchedulerCore core(config_with_eos({eos}));
  core.add_request(r);
  FakeExecutor exec(32, 0, 16, kVocab);
  Transcript t;
  drive(core, exec, t);
  EXPECT_EQ(t.out(1, 0).size(), 20u);
  EXPECT_EQ(t.why(1, 0), "length");
}

TEST(StopConditions, StopTokenIdsAndMinTokens) {
  auto r = make_request(1, prompt_of(12, 2), 20);
  const int32_t stop_tok = token_at(r, 1);
  r.sampling.stop_token_ids = {stop_tok};
  r.sampling.min_tokens = 0;
  {
    SchedulerCore core(config_with_eos({}));
    core.add_request(r);
    FakeExecutor exec(32, 0, 16, kVocab);
    Transcript t;
    drive(core, exec, t);
    EXPECT_EQ(t.why(1, 0), "stop");
    EXPECT_EQ(t.out(1, 0), expected_stream(r, 0, {}, 64, kVocab));
  }
  r.sampling.min_tokens = 10;  // the stop token before 10 outputs does not stop
  {
    SchedulerCore core(config_with_eos({}));
    core.add_request(r);
    FakeExecutor exec(32, 0, 16, kVocab);
    Transcript t;
    drive(core, exec, t);
    EXPECT_GE(t.out(1, 0).size(), 10u);
    EXPECT_EQ(t.out(1, 0), expected_stream(r, 0, {}, 64, kVocab));
  }
}

TEST(StopConditions, MaxModelLenEndsWithLength) {
  auto r = make_request(1, prompt_of(60, 3), 100);  // max_model_len 64: 4 tokens fit
  SchedulerCore core(config_with_eos({}));
  core.add_request(r);
  FakeExecutor exec(32, 0, 16, kVocab);
  Transcript t;
  drive(core, exec, t);
  EXPECT_EQ(t.out(1, 0).size(), 4u);
  EXPECT_EQ(t.why(1, 0), "length");
  expect_all_returned(core);
}

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST(Rejection, ImpossibleRequestsAreAnsweredAtOnce) {
  auto c = config_with_eos({});
  c.num_device_blocks = 3;  // 48 tokens
  SchedulerCore core(c);
  Transcript t;
  t.take(core.add_request(make_request(1, prompt_of(64, 1), 4)));  // prompt not below max_model_len
  t.take(core.add_request(make_request(2, prompt_of(40, 1), 30)));  // 64 tokens > 3 blocks
  t.take(core.add_request(make_request(3, {}, 4)));                // empty prompt
  t.take(core.add_request(make_request(4, prompt_of(4, 1), 0)));    // max_tokens 0
  auto n0 = make_request(5, prompt_of(4, 1), 4);
  n0.sampling.n = 0;
  t.take(core.add_request(n0));
  for (uint64_t id = 1; id <= 5; ++id) EXPECT_EQ(t.why(id, 0), "error") << "request " << id;
  ASSERT_EQ(t.errors.size(), 5u);
  EXPECT_EQ(t.errors[0].kind, "context_length_exceeded");
  EXPECT_EQ(t.errors[1].code, 413);
  EXPECT_NE(t.errors[1].message.find("request 2"), std::string::npos);
  EXPECT_FALSE(core.has_unfinished());
  EXPECT_FALSE(core.schedule().has_value());

  // A request that fits still runs, and a duplicate id is refused without touching it.
  t.take(core.add_request(make_request(6, prompt_of(20, 1), 4)));
  auto dup = core.add_request(make_request(6, prompt_of(20, 1), 4));
  EXPECT_TRUE(dup.deltas.empty());
  ASSERT_EQ(dup.errors.size(), 1u);
  EXPECT_EQ(dup.errors[0].kind, "duplicate_request");
  FakeExecutor exec(3, 0, 16, kVocab);
  drive(core, exec, t);
  EXPECT_EQ(t.why(6, 0), "length");
  EXPECT_EQ(t.out(6, 0).size(), 4u);
}

// [scheduler] seed (vLLM's --seed): unseeded samples get seeds made of it and their order of
// arrival, so that the same requests in the same order sample alike on another run; a request's
// own seed still wins, and without the setting unseeded samples stay unseeded (-1).
std::vector<int64_t> first_plan_seeds(int64_t server_seed, int64_t request_seed) {
  SchedulerConfig c = config_with_eos({});
  c.seed = server_seed;
  SchedulerCore core(c);
  auto a = make_request(1, prompt_of(4, 1), 4);
  auto b = make_request(2, prompt_of(4, 2), 4);
  a.sampling.n = 2;
  b.sampling.seed = request_seed;
  core.add_request(a);
  core.add_request(b);
  auto plan = core.schedule();
  std::vector<int64_t> seeds;
  if (plan) {
    for (const auto& w : plan->seqs) seeds.push_back(w.seed);
  }
  return seeds;
}

TEST(ServerSeed, SeedsUnseededSamplesByArrival) {
  const auto unseeded = first_plan_seeds(-1, -1);
  ASSERT_FALSE(unseeded.empty());
  for (int64_t s : unseeded) EXPECT_EQ(s, -1);
  const auto seeded = first_plan_seeds(42, -1);
  ASSERT_EQ(seeded.size(), unseeded.size());
  for (int64_t s : seeded) EXPECT_GE(s, 0);
  EXPECT_EQ(std::set<int64_t>(seeded.begin(), seeded.end()).size(), seeded.size());  // one stream each
  EXPECT_EQ(first_plan_seeds(42, -1), seeded);  // the same run again: the same seeds
  EXPECT_NE(first_plan_seeds(43, -1), seeded);
  const auto own = first_plan_seeds(42, 7);
  EXPECT_NE(std::find(own.begin(), own.end(), 7), own.end());  // request 2's own seed is kept
}

}  // namespace
}  // namespace zinfer::scheduler::testing
