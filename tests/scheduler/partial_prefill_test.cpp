// Partial prefills (max_num_partial_prefills, max_long_partial_prefills, vLLM's): a long prompt
// shares the step's budget with the short prompts that arrive beside it, a second long prompt
// waits while the short ones behind it start, and the tokens are those of an unthrottled run.
#include <gtest/gtest.h>

#include <map>

#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig partial_config(int32_t max_partial) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 64;
  c.max_num_seqs = 16;
  c.max_model_len = 1024;  // long_prefill_threshold() = 4% = 40 tokens
  c.block_size = 16;
  c.num_device_blocks = 256;
  c.max_plans_in_flight = 1;
  c.max_num_partial_prefills = max_partial;
  c.max_long_partial_prefills = 1;
  return c;
}

// tokens of each request's work in a plan
std::map<uint64_t, int32_t> works_by_seq(const protocol::StepPlan& p) {
  std::map<uint64_t, int32_t> m;
  for (const auto& w : p.seqs) m[w.seq_id] = w.num_tokens;
  return m;
}

TEST(PartialPrefill, ThresholdIsFourPercentOfTheContextWhenUnsetAtLeastAShare) {
  SchedulerConfig c = partial_config(4);
  EXPECT_EQ(c.long_prefill_threshold(), 40);
  c.max_model_len = 100;  // 4% = 4, below a prompt's share of a step (64 / 4)
  EXPECT_EQ(c.long_prefill_threshold(), 16);
  c.long_prefill_token_threshold = 100;
  EXPECT_EQ(c.long_prefill_threshold(), 100);
  c.long_prefill_token_threshold = 0;
  c.max_num_partial_prefills = 1;
  EXPECT_EQ(c.long_prefill_threshold(), 0);  // the rule is off: no prompt is long
}

TEST(PartialPrefill, ConfigRefusesMoreLongThanPartialPrefills) {
  SchedulerConfig c = partial_config(2);
  c.max_long_partial_prefills = 3;
  EXPECT_THROW(c.validate(), std::invalid_argument);
  EXPECT_NE(check_settings(c).find("max_long_partial_prefills"), std::string::npos);
  c.max_long_partial_prefills = 2;
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(check_settings(c), "");
  c.max_num_partial_prefills = 0;
  EXPECT_THROW(c.validate(), std::invalid_argument);
}

// The long prompt arrives first; six short ones right after. Its chunk is the budget over the
// four prompts that may compute (64 / 4 = 16); three short ones start beside it in step 1 (four
// prompts at most), the other three in step 2, while the long prompt goes on.
TEST(PartialPrefill, ShortPromptsStartBesideALongOne) {
  SchedulerCore core(partial_config(4));
  core.add_request(make_request(1, prompt_of(600, 1), 4));
  for (uint64_t id = 2; id <= 7; ++id) core.add_request(make_request(id, prompt_of(8, static_cast<int32_t>(id)), 4));
  FakeExecutor exec(256, 0, 16, kVocab);
  Transcript t;
  auto p1 = core.schedule();
  ASSERT_TRUE(p1);
  ASSERT_EQ(p1->seqs.size(), 4u);
  EXPECT_EQ(p1->seqs[0].num_tokens, 16);  // the long prompt's share
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(p1->seqs[i].num_tokens, 8);
  t.take(core.postprocess(exec.run(*p1)));
  auto p2 = core.schedule();
  ASSERT_TRUE(p2);
  // Three decodes, the long prompt's next 16 tokens, the three other short prompts.
  ASSERT_EQ(p2->seqs.size(), 7u);
  int32_t prompts = 0;
  for (const auto& w : p2->seqs) prompts += w.num_tokens > 1 ? 1 : 0;
  EXPECT_EQ(prompts, 4);
  t.take(core.postprocess(exec.run(*p2)));
  for (uint64_t id = 2; id <= 7; ++id) EXPECT_FALSE(t.out(id).empty()) << "request " << id;
  EXPECT_TRUE(t.out(1).empty());
  // Alone, the long prompt takes the whole budget (the share is over the prompts in line).
  const size_t before = t.plans.size();
  drive(core, exec, t);
  bool full_budget_seen = false;
  for (size_t i = before; i < t.plans.size(); ++i) {
    const auto& p = t.plans[i];
    for (const auto& w : p.seqs) full_budget_seen |= w.num_tokens == 64;
  }
  EXPECT_TRUE(full_budget_seen);
}

// max_num_partial_prefills = 1 keeps the rule off: the first prompt takes every step's budget
// and the short prompt behind it waits (the behaviour the rule exists to change).
TEST(PartialPrefill, OffALongPromptTakesTheBudget) {
  SchedulerCore core(partial_config(1));
  core.add_request(make_request(1, prompt_of(600, 1), 4));
  core.add_request(make_request(2, prompt_of(8, 2), 4));
  FakeExecutor exec(256, 0, 16, kVocab);
  Transcript t;
  for (int step = 0; step < 9; ++step) {
    auto p = core.schedule();
    ASSERT_TRUE(p);
    ASSERT_EQ(p->seqs.size(), 1u) << "step " << step;
    EXPECT_EQ(p->seqs[0].num_tokens, 64);
    t.take(core.postprocess(exec.run(*p)));
  }
  EXPECT_TRUE(t.out(2).empty());
}

// Two long prompts then a short one: the second long prompt is passed over (one long partial
// prefill at most) while the short one starts; it starts once the first has no more than the
// threshold left.
TEST(PartialPrefill, SecondLongPromptWaitsAndShortOnesGoPast) {
  SchedulerCore core(partial_config(4));
  core.add_request(make_request(1, prompt_of(200, 1), 2));
  core.add_request(make_request(2, prompt_of(200, 2), 2));
  core.add_request(make_request(3, prompt_of(8, 3), 2));
  FakeExecutor exec(256, 0, 16, kVocab);
  Transcript t;
  auto p1 = core.schedule();
  ASSERT_TRUE(p1);
  ASSERT_EQ(p1->seqs.size(), 2u);
  // Prompts in line: 1 and 3 (2 is passed over): 64 / 2 = 32 for the long one.
  EXPECT_EQ(p1->seqs[0].num_tokens, 32);
  EXPECT_EQ(p1->seqs[1].num_tokens, 8);
  const uint64_t first_long = p1->seqs[0].seq_id;
  t.take(core.postprocess(exec.run(*p1)));
  int32_t first_done = 32;
  uint64_t second_long = 0;
  for (int step = 0; step < 40 && second_long == 0; ++step) {
    auto p = core.schedule();
    ASSERT_TRUE(p);
    auto works = works_by_seq(*p);
    for (const auto& [seq, n] : works) {
      if (seq != first_long && n > 1) second_long = seq;
    }
    if (second_long != 0) {
      // It starts only once the first is short: at most 40 tokens were left before this step.
      EXPECT_GE(first_done, 200 - 40);
    }
    if (works.count(first_long)) first_done += works[first_long];
    t.take(core.postprocess(exec.run(*p)));
  }
  EXPECT_NE(second_long, 0u);
  drive(core, exec, t);
  for (uint64_t id = 1; id <= 3; ++id) {
    EXPECT_EQ(t.out(id), expected_stream(make_request(id, prompt_of(id == 3 ? 8 : 200, static_cast<int32_t>(id)), 2), 0,
                                         {}, 1024, kVocab));
  }
  expect_all_returned(core);
}

// Many prompts of mixed lengths under the rule: every request gets the tokens of the reference
// (the rule changes only when tokens are computed), no step exceeds the budget or the prompt cap,
// and no more than one long prompt computes in a step.
TEST(PartialPrefill, MixedLoadKeepsTheCapsAndTheTokens) {
  SchedulerConfig c = partial_config(3);
  SchedulerCore core(c);
  std::vector<protocol::TokenizedRequest> requests;
  for (uint64_t id = 1; id <= 24; ++id) {
    const int32_t len = id % 5 == 0 ? 150 + static_cast<int32_t>(id) : 3 + static_cast<int32_t>(id % 7);
    requests.push_back(make_request(id, prompt_of(len, static_cast<int32_t>(id)), 3));
    core.add_request(requests.back());
  }
  FakeExecutor exec(256, 0, 16, kVocab);
  Transcript t;
  drive(core, exec, t);
  for (const auto& p : t.plans) {
    int32_t tokens = 0;
    int32_t prompts = 0;
    for (const auto& w : p.seqs) {
      tokens += w.num_tokens;
      prompts += w.num_tokens > 1 ? 1 : 0;
    }
    EXPECT_LE(tokens, 64);
    EXPECT_LE(prompts, 3);
  }
  for (const auto& r : requests) EXPECT_EQ(t.out(r.request_id), expected_stream(r, 0, {}, 1024, kVocab));
  expect_all_returned(core);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
