// Continuous batching: token budget, sequence cap, decodes before prefill chunks, chunk boundaries.
#include <gtest/gtest.h>

#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig small_config() {
  SchedulerConfig c;
  c.max_num_batched_tokens = 32;
  c.max_num_seqs = 4;
  c.max_model_len = 512;
  c.block_size = 16;
  c.num_device_blocks = 64;
  c.max_plans_in_flight = 1;
  return c;
}

int32_t plan_tokens(const protocol::StepPlan& p) {
  int32_t n = 0;
  for (const auto& w : p.seqs) n += w.num_tokens;
  return n;
}

// Invariant 12 (docs/architecture.md): a step's order (decodes, prefill chunks, swapped-in, new) and budget.
TEST(Batching, LongPromptIsChunkedAtTheBudget) {
  SchedulerCore core(small_config());
  core.add_request(make_request(1, prompt_of(100, 1), 2));
  std::vector<std::pair<int32_t, int32_t>> chunks;  // (start_pos, num_tokens)
  std::vector<bool> samples;
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  while (core.has_unfinished()) {
    auto plan = core.schedule();
    ASSERT_TRUE(plan);
    ASSERT_EQ(plan->seqs.size(), 1u);
    const auto& w = plan->seqs[0];
    chunks.emplace_back(w.start_pos, w.num_tokens);
    samples.push_back(w.sample);
    EXPECT_EQ(w.block_table.size(), static_cast<size_t>((w.start_pos + w.num_tokens + 15) / 16));
    t.take(core.postprocess(exec.run(*plan)));
  }
  // 100 prompt tokens in chunks of 32, the first token sampled after the last chunk, then one
  // decode for the second token.
  const std::vector<std::pair<int32_t, int32_t>> want = {{0, 32}, {32, 32}, {64, 32}, {96, 4}, {100, 1}};
  EXPECT_EQ(chunks, want);
  EXPECT_EQ(samples, (std::vector<bool>{false, false, false, true, true}));
  EXPECT_EQ(t.out(1, 0), expected_stream(make_request(1, prompt_of(100, 1), 2), 0, {}, 512, kVocab));
  EXPECT_EQ(t.why(1, 0), "length");
}

// Invariant 12 (docs/architecture.md): a step's order (decodes, prefill chunks, swapped-in, new) and budget.
TEST(Batching, BudgetAndSequenceCapHoldEveryStep) {
  SchedulerCore core(small_config());
  for (uint64_t id = 1; id <= 10; ++id) core.add_request(make_request(id, prompt_of(5 + 7 * id, id), 6));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  drive(core, exec, t);
  for (const auto& p : t.plans) {
    EXPECT_LE(plan_tokens(p), 32);
    EXPECT_LE(p.seqs.size(), 4u);
    EXPECT_FALSE(p.seqs.empty());
  }
  for (uint64_t id = 1; id <= 10; ++id) {
    EXPECT_EQ(t.out(id, 0), expected_stream(make_request(id, prompt_of(5 + 7 * id, id), 6), 0, {}, 512, kVocab))
        << "request " << id;
    EXPECT_EQ(t.why(id, 0), "length");
  }
  expect_all_returned(core);
}

// Invariant 12 (docs/architecture.md): a step's order (decodes, prefill chunks, swapped-in, new) and budget.
TEST(Batching, DecodesComeBeforePrefillChunks) {
  SchedulerCore core(small_config());
  core.add_request(make_request(1, prompt_of(10, 1), 8));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto p1 = core.schedule();  // request 1's prompt
  t.take(core.postprocess(exec.run(*p1)));
  core.add_request(make_request(2, prompt_of(60, 2), 4));
  auto p2 = core.schedule();
  ASSERT_EQ(p2->seqs.size(), 2u);
  EXPECT_EQ(p2->seqs[0].seq_id, p1->seqs[0].seq_id);  // the decode first
  EXPECT_EQ(p2->seqs[0].num_tokens, 1);
  EXPECT_EQ(p2->seqs[1].num_tokens, 31);  // the new prompt gets the rest of the budget
  t.take(core.postprocess(exec.run(*p2)));
  auto p3 = core.schedule();
  ASSERT_EQ(p3->seqs.size(), 2u);
  EXPECT_EQ(p3->seqs[0].num_tokens, 1);
  EXPECT_EQ(p3->seqs[1].start_pos, 31);
  EXPECT_EQ(p3->seqs[1].num_tokens, 29);  // the rest of the prompt
  EXPECT_TRUE(p3->seqs[1].sample);
}

// Invariant 12 (docs/architecture.md): with long_prefill_token_threshold a prompt's chunks are cut
// at the threshold, not at the budget; the rest of the budget goes to another prompt in the same
// step, and the tokens are those of the unthrottled run.
TEST(Batching, LongPrefillThresholdCapsEachPromptsChunk) {
  auto c = small_config();
  c.long_prefill_token_threshold = 12;
  c.max_num_partial_prefills = 1;  // the threshold alone (with partial prefills both prompts are long: one at a time)
  SchedulerCore core(c);
  core.add_request(make_request(1, prompt_of(10, 1), 8));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto p1 = core.schedule();  // a short prompt fits the threshold whole
  ASSERT_EQ(p1->seqs.size(), 1u);
  EXPECT_EQ(p1->seqs[0].num_tokens, 10);
  t.take(core.postprocess(exec.run(*p1)));
  core.add_request(make_request(2, prompt_of(30, 2), 4));
  core.add_request(make_request(3, prompt_of(30, 3), 4));
  std::vector<std::vector<int32_t>> steps;  // tokens of each work, per step
  while (core.has_unfinished()) {
    auto plan = core.schedule();
    ASSERT_TRUE(plan);
    std::vector<int32_t> sizes;
    for (const auto& w : plan->seqs) {
      EXPECT_LE(w.num_tokens, 12);
      sizes.push_back(w.num_tokens);
    }
    EXPECT_LE(plan_tokens(*plan), 32);
    steps.push_back(sizes);
    t.take(core.postprocess(exec.run(*plan)));
  }
  // Step 1: request 1's decode, then 12 tokens of each new prompt (1 + 12 + 12 <= 32).
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0], (std::vector<int32_t>{1, 12, 12}));
  EXPECT_EQ(steps[1], (std::vector<int32_t>{1, 12, 12}));
  EXPECT_EQ(steps[2], (std::vector<int32_t>{1, 6, 6}));  // the prompts' last 6 tokens each
  for (uint64_t id : {1, 2, 3}) {
    const auto r = make_request(id, prompt_of(id == 1 ? 10 : 30, id), id == 1 ? 8 : 4);
    EXPECT_EQ(t.out(id, 0), expected_stream(r, 0, {}, 512, kVocab)) << "request " << id;
  }
  expect_all_returned(core);
}

TEST(Batching, SequenceCapDefersAdmission) {
  auto c = small_config();
  c.max_num_seqs = 2;
  c.max_num_batched_tokens = 1000;
  SchedulerCore core(c);
  for (uint64_t id = 1; id <= 3; ++id) core.add_request(make_request(id, prompt_of(4, id), 3));
  auto p = core.schedule();
  ASSERT_EQ(p->seqs.size(), 2u);
  EXPECT_EQ(core.num_waiting(), 1u);
  EXPECT_EQ(core.stats().running, 2);
  EXPECT_EQ(core.stats().waiting, 1);
}

TEST(Batching, NothingToDoGivesNoPlan) {
  SchedulerCore core(small_config());
  EXPECT_FALSE(core.schedule().has_value());
  EXPECT_FALSE(core.has_unfinished());
}

// Invariant 14 (docs/architecture.md): plans run one at a time, in order.
TEST(Batching, ResultsOutOfOrderAreRefused) {
  SchedulerCore core(small_config());
  core.add_request(make_request(1, prompt_of(4, 1), 3));
  auto p = core.schedule();
  protocol::StepResult wrong;
  wrong.step_id = p->step_id + 5;
  EXPECT_THROW(core.postprocess(wrong), std::invalid_argument);
  protocol::StepResult missing;
  missing.step_id = p->step_id;  // the plan sampled one token, the result has none
  EXPECT_THROW(core.postprocess(missing), std::invalid_argument);
  FakeExecutor exec(64, 0, 16, kVocab);
  EXPECT_NO_THROW(core.postprocess(exec.run(*p)));
  EXPECT_THROW(core.postprocess(exec.run(*p)), std::invalid_argument);  // nothing in flight
}

TEST(Batching, BadConfigIsRefused) {
  auto c = small_config();
  c.max_num_batched_tokens = 0;
  EXPECT_THROW(SchedulerCore{c}, std::invalid_argument);
  c = small_config();
  c.policy = "lottery";
  EXPECT_THROW(SchedulerCore{c}, std::invalid_argument);
  c = small_config();
  c.long_prefill_token_threshold = -1;
  EXPECT_THROW(SchedulerCore{c}, std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
