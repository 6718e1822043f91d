// Sampling rules (penalties, masks, logit_bias, min_tokens): which requests have them, what they
// hold, and that each sequence's rules travel once, with its first sampling work.
#include <gtest/gtest.h>

#include <map>

#include "actors/scheduler/sampling_rules.h"
#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

TEST(SamplingRules, OnlyRequestsThatProcessLogitsHaveThem) {
  protocol::SamplingParams s;
  EXPECT_FALSE(has_sampling_rules(s));
  s.temperature = 0.3f;
  s.top_k = 5;
  s.stop_token_ids = {7};
  EXPECT_FALSE(has_sampling_rules(s));
  for (int which = 0; which < 9; ++which) {
    protocol::SamplingParams t;
    if (which == 0) t.repetition_penalty = 1.1f;
    if (which == 1) t.frequency_penalty = -0.2f;
    if (which == 2) t.presence_penalty = 0.5f;
    if (which == 3) t.min_p = 0.1f;
    if (which == 4) t.logit_bias = {{3, 1.0f}};
    if (which == 5) t.allowed_token_ids = {1};
    if (which == 6) t.bad_words_token_ids = {{4}};
    if (which == 7) t.min_tokens = 2;
    if (which == 8) t.structured.emplace();  // the executor masks by the grammar
    EXPECT_TRUE(has_sampling_rules(t)) << which;
  }
}

TEST(SamplingRules, MinTokensMasksStopIdsAndEosUnlessIgnored) {
  protocol::SamplingParams s;
  s.min_tokens = 3;
  s.stop_token_ids = {9};
  s.frequency_penalty = 0.5f;
  const std::vector<int32_t> prompt = {1, 2, 3}, outputs = {4}, eos = {2, 5};
  protocol::SamplingRules r = sampling_rules(s, prompt, outputs, eos);
  EXPECT_EQ(r.min_tokens, 3);
  EXPECT_EQ(r.min_tokens_stop_ids, (std::vector<int32_t>{9, 2, 5}));
  EXPECT_TRUE(r.prompt_ids.empty());  // only the repetition penalty reads the prompt
  EXPECT_EQ(r.output_ids, outputs);
  EXPECT_FLOAT_EQ(r.frequency_penalty, 0.5f);
  s.ignore_eos = true;
  s.repetition_penalty = 1.2f;
  r = sampling_rules(s, prompt, outputs, eos);
  EXPECT_EQ(r.min_tokens_stop_ids, (std::vector<int32_t>{9}));
  EXPECT_EQ(r.prompt_ids, prompt);
  s.min_tokens = 0;
  EXPECT_TRUE(sampling_rules(s, prompt, outputs, eos).min_tokens_stop_ids.empty());
}

TEST(SamplingRules, EachSequenceGetsItsRulesWithItsFirstSamplingWorkOnly) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 16;  // prompts of 40 tokens take several chunks
  c.max_num_seqs = 8;
  c.max_model_len = 128;
  c.num_device_blocks = 64;
  c.eos_token_ids = {999};
  SchedulerCore core(c);
  auto with_rules = make_request(1, prompt_of(40, 1), 6);
  with_rules.sampling.n = 3;
  with_rules.sampling.repetition_penalty = 1.3f;
  with_rules.sampling.logit_bias = {{5, -2.0f}};
  auto without = make_request(2, prompt_of(40, 2), 6);
  core.add_request(with_rules);
  core.add_request(without);
  FakeExecutor exec(64, 0, 16, 1000);
  Transcript t;
  drive(core, exec, t);
  std::map<uint64_t, int> rules_seen, samples_seen;
  std::map<uint64_t, size_t> prompt_len;
  for (const auto& plan : t.plans) {
    for (const auto& w : plan.seqs) {
      if (w.rules) {
        ++rules_seen[w.seq_id];
        EXPECT_TRUE(w.sample) << "rules travel with a sampling work";
        EXPECT_EQ(samples_seen[w.seq_id], 0) << "rules travel with the first sampling work";
        EXPECT_FLOAT_EQ(w.rules->repetition_penalty, 1.3f);
        ASSERT_EQ(w.rules->logit_bias.size(), 1u);
        EXPECT_EQ(w.rules->logit_bias[0].token, 5);
        prompt_len[w.seq_id] = w.rules->prompt_ids.size();
      }
      if (w.sample) ++samples_seen[w.seq_id];
    }
  }
  EXPECT_EQ(rules_seen.size(), 3u);  // the three samples of request 1, not request 2's sequence
  for (const auto& [seq, count] : rules_seen) {
    EXPECT_EQ(count, 1) << "sequence " << seq;
    EXPECT_EQ(prompt_len[seq], 40u);
  }
  EXPECT_EQ(t.out(1, 2).size(), 6u);
  EXPECT_EQ(t.out(2, 0).size(), 6u);
}

TEST(SamplingRules, StructuredOutputTravelsWithTheRulesOfEverySample) {
  // Invariant 37 (docs/architecture.md): each sample of an n > 1 request is its own sequence
  // and gets the request's structured output with its own first sampling work.
  SchedulerConfig c;
  c.max_num_batched_tokens = 64;
  c.max_num_seqs = 8;
  c.max_model_len = 128;
  c.num_device_blocks = 64;
  c.eos_token_ids = {999};
  SchedulerCore core(c);
  auto req = make_request(1, prompt_of(20, 1), 4);
  req.sampling.n = 4;
  protocol::StructuredOutput so;
  so.kind = protocol::StructuredKind::kRegex;
  so.text = "[0-9]+";
  so.begin_after = "</think>";
  req.sampling.structured = so;
  core.add_request(req);
  FakeExecutor exec(64, 0, 16, 1000);
  Transcript t;
  drive(core, exec, t);
  std::map<uint64_t, int> rules_seen;
  for (const auto& plan : t.plans) {
    for (const auto& w : plan.seqs) {
      if (!w.rules) continue;
      ++rules_seen[w.seq_id];
      ASSERT_TRUE(w.rules->structured.has_value());
      EXPECT_EQ(w.rules->structured->kind, protocol::StructuredKind::kRegex);
      EXPECT_EQ(w.rules->structured->text, "[0-9]+");
      EXPECT_EQ(w.rules->structured->begin_after, "</think>");
      EXPECT_TRUE(w.rules->output_ids.empty());
    }
  }
  EXPECT_EQ(rules_seen.size(), 4u);
  for (const auto& [seq, count] : rules_seen) EXPECT_EQ(count, 1) << "sequence " << seq;
}

TEST(SamplingRules, ASequenceTheExecutorFailsEndsItsRequestAlone) {
  // StepResult.seq_errors (a grammar that does not compile in the executor): that request ends
  // with a 400 naming the problem, the other request of the step goes on.
  SchedulerConfig c;
  c.max_num_batched_tokens = 64;
  c.max_num_seqs = 8;
  c.max_model_len = 128;
  c.num_device_blocks = 64;
  c.eos_token_ids = {999};
  SchedulerCore core(c);
  auto bad = make_request(1, prompt_of(10, 1), 5);
  bad.sampling.n = 2;
  core.add_request(bad);
  core.add_request(make_request(2, prompt_of(10, 2), 5));
  FakeExecutor exec(64, 0, 16, 1000);
  Transcript t;
  auto plan = core.schedule();
  ASSERT_TRUE(plan);
  protocol::StepResult r = exec.run(*plan);
  ASSERT_FALSE(r.outputs.empty());
  r.seq_errors.push_back({plan->seqs[0].seq_id, "structured output: the regex does not compile"});
  t.take(core.postprocess(r));
  EXPECT_EQ(t.why(1), "error");
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0].request_id, 1u);
  EXPECT_EQ(t.errors[0].code, 400);
  EXPECT_EQ(t.errors[0].message, "structured output: the regex does not compile");
  drive(core, exec, t);
  EXPECT_EQ(t.why(2), "length");
  EXPECT_EQ(t.out(2).size(), 5u);
  expect_all_returned(core);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
