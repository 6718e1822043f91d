// vLLM's prompt_logprobs through the scheduler (actors/scheduler/prompt_logprobs.h): the works
// that compute the prompt ask the executor to score it, chunk by chunk; the pieces are put
// together in order; the whole prompt's logprobs leave once, before the first token; a request
// that asks for them takes no prefix-cache hit; recomputed positions add nothing.
#include <gtest/gtest.h>

#include "actors/scheduler/prompt_logprobs.h"
#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig config(int32_t batch_tokens, bool caching) {
  SchedulerConfig c;
  c.max_num_batched_tokens = batch_tokens;
  c.max_num_seqs = 8;
  c.max_model_len = 512;
  c.num_device_blocks = 64;
  c.enable_prefix_caching = caching;
  return c;
}

protocol::TokenizedRequest scored(uint64_t id, const std::vector<int32_t>& prompt, int32_t top, int32_t n = 1) {
  auto r = make_request(id, prompt, 3);
  r.sampling.prompt_logprobs = top;
  r.sampling.n = n;
  return r;
}

// What the fake executor's scores say: position p (1 ..) scored the prompt's token p.
void expect_whole_prompt(const std::vector<protocol::PromptLogprobs>& sent, const std::vector<int32_t>& prompt,
                         uint64_t request_id, int32_t top) {
  ASSERT_EQ(sent.size(), 1u) << "sent once";
  const auto& lp = sent[0];
  EXPECT_EQ(lp.id, request_id);
  EXPECT_EQ(lp.first_position, 1);
  ASSERT_EQ(lp.logprobs.size(), prompt.size() - 1);
  for (size_t p = 1; p < prompt.size(); ++p) {
    EXPECT_EQ(lp.logprobs[p - 1], -static_cast<float>(static_cast<int32_t>(p) * 1000 + prompt[p])) << p;
    EXPECT_EQ(lp.ranks[p - 1], static_cast<int32_t>(p));
    EXPECT_EQ(lp.top_logprobs[p - 1].size(), static_cast<size_t>(top));
  }
}

TEST(PromptLogprobs, ChunkedPromptIsScoredWholeAndSentOnceBeforeTheFirstToken) {
  SchedulerCore core(config(16, false));  // 50 prompt tokens: 4 chunks
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  const auto prompt = prompt_of(50, 3);
  core.add_request(scored(1, prompt, 2));
  core.add_request(make_request(2, prompt_of(20, 4), 3));  // asks for none
  drive(core, exec, t);
  expect_whole_prompt(t.prompt_logprobs[1], prompt, 1, 2);
  EXPECT_EQ(t.prompt_logprobs.count(2), 0u);
  // Only works of request 1 were scored: each scored work is one of its prompt chunks, every
  // chunk is scored, and the chunks cover the prompt once (more than one: it was chunked).
  int32_t scored_works = 0, scored_positions = 0;
  for (const auto& plan : t.plans) {
    for (const auto& scoring : plan.prompt_scoring) {
      ++scored_works;
      bool found = false;
      for (const auto& w : plan.seqs) {
        if (w.seq_id != scoring.seq_id) continue;
        found = true;
        EXPECT_LT(w.start_pos, static_cast<int32_t>(prompt.size()));
        scored_positions += w.num_tokens;
      }
      EXPECT_TRUE(found) << "a scoring for sequence " << scoring.seq_id << " without its work";
    }
  }
  EXPECT_GT(scored_works, 1);
  EXPECT_EQ(scored_positions, static_cast<int32_t>(prompt.size()));
  EXPECT_EQ(t.out(1).size(), 3u);
  expect_all_returned(core);
}

TEST(PromptLogprobs, NGreaterThanOneScoresThePromptOnce) {
  SchedulerCore core(config(256, false));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  const auto prompt = prompt_of(30, 5);
  core.add_request(scored(1, prompt, 0, 3));
  drive(core, exec, t);
  expect_whole_prompt(t.prompt_logprobs[1], prompt, 1, 0);
  for (int32_t i = 0; i < 3; ++i) EXPECT_EQ(t.out(1, i).size(), 3u);
}

TEST(PromptLogprobs, NoPrefixCacheHitWhileThePromptIsScored) {
  SchedulerCore core(config(256, true));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  const auto prompt = prompt_of(70, 6);
  core.add_request(make_request(1, prompt, 3));
  drive(core, exec, t);
  core.add_request(scored(2, prompt, 1));
  auto plan = core.schedule();
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->seqs[0].start_pos, 0);  // the cached blocks have no logits: computed again
  t.take(core.postprocess(exec.run(*plan)));
  drive(core, exec, t);
  expect_whole_prompt(t.prompt_logprobs[2], prompt, 2, 1);
  EXPECT_EQ(t.cached_tokens[2], 0);
  EXPECT_EQ(t.out(1), t.out(2));  // scheduling changes no token
}

TEST(PromptLogprobs, PiecesJoinInOrderAndRepeatsAddNothing) {
  Request r;
  r.num_prompt_tokens = 6;
  r.sampling.prompt_logprobs = 0;
  EXPECT_TRUE(needs_prompt_scoring(r));
  auto piece = [](int32_t first, std::vector<float> lps) {
    protocol::PromptLogprobs p;
    p.first_position = first;
    p.logprobs = lps;
    p.ranks.assign(lps.size(), 1);
    p.top_logprobs.assign(lps.size(), {});
    return p;
  };
  add_prompt_logprobs(r, piece(1, {-1, -2}));
  add_prompt_logprobs(r, piece(1, {-9, -9, -3}));    // a recompute: positions 1, 2 known; 3 is new
  add_prompt_logprobs(r, piece(5, {-5}));            // a gap: ignored
  EXPECT_EQ(r.prompt_logprobs.logprobs, (std::vector<float>{-1, -2, -3}));
  add_prompt_logprobs(r, piece(4, {-4, -5, -6, -7}));  // positions past the prompt (5 is its last) are dropped
  EXPECT_EQ(r.prompt_logprobs.logprobs, (std::vector<float>{-1, -2, -3, -4, -5}));
  EXPECT_FALSE(needs_prompt_scoring(r));
}

}  // namespace
}  // namespace zinfer::scheduler::testing
