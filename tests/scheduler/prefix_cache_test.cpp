// Automatic prefix caching through the scheduler: hits, hit rate, identical outputs, the
// "always compute one token" rule.
#include <gtest/gtest.h>

#include "harness.h"

namespace zinfer::scheduler::testing {
namespace {

constexpr int32_t kVocab = 1000;

SchedulerConfig cache_config(bool caching) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 256;
  c.max_num_seqs = 8;
  c.max_model_len = 512;
  c.num_device_blocks = 64;
  c.enable_prefix_caching = caching;
  return c;
}

// Invariant 13 (docs/architecture.md): scheduling never changes a token.
TEST(PrefixCache, RepeatedPromptIsServedFromCacheWithIdenticalOutput) {
  SchedulerCore core(cache_config(true));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto first = make_request(1, prompt_of(70, 4), 5);  // 4 full blocks + 6 tokens
  core.add_request(first);
  drive(core, exec, t);
  auto second = make_request(2, prompt_of(70, 4), 5);
  core.add_request(second);
  auto plan = core.schedule();
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->seqs.size(), 1u);
  EXPECT_EQ(plan->seqs[0].start_pos, 64);  // 4 blocks from the cache
  EXPECT_EQ(plan->seqs[0].num_tokens, 6);
  t.take(core.postprocess(exec.run(*plan)));
  drive(core, exec, t);
  EXPECT_EQ(t.out(1, 0), t.out(2, 0));
  EXPECT_EQ(t.out(2, 0), expected_stream(second, 0, {}, 512, kVocab));
  EXPECT_EQ(t.cached_tokens[1], 0);
  EXPECT_EQ(t.cached_tokens[2], 64);
  EXPECT_DOUBLE_EQ(core.stats().prefix_hit_rate, 64.0 / 140.0);
  expect_all_returned(core);
}

TEST(PrefixCache, SharedBlocksAreTheSamePhysicalBlocks) {
  SchedulerCore core(cache_config(true));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto common = prompt_of(48, 9);
  auto a = common, b = common;
  a.insert(a.end(), {1, 2, 3});
  b.insert(b.end(), {4, 5, 6, 7});
  core.add_request(make_request(1, a, 30));
  auto p1 = core.schedule();
  t.take(core.postprocess(exec.run(*p1)));
  core.add_request(make_request(2, b, 3));
  auto p2 = core.schedule();
  ASSERT_EQ(p2->seqs.size(), 2u);
  const auto& table_a = p2->seqs[0].block_table;
  const auto& table_b = p2->seqs[1].block_table;
  EXPECT_EQ(p2->seqs[1].start_pos, 48);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(table_a[i], table_b[i]) << "block " << i;
    EXPECT_EQ(core.kv().device_pool().ref_count(table_a[i]), 2);
  }
  EXPECT_NE(table_a[3], table_b[3]);
  t.take(core.postprocess(exec.run(*p2)));
  drive(core, exec, t);
  EXPECT_EQ(t.out(2, 0), expected_stream(make_request(2, b, 3), 0, {}, 512, kVocab));
  EXPECT_EQ(t.out(1, 0), expected_stream(make_request(1, a, 30), 0, {}, 512, kVocab));
  expect_all_returned(core);
}

TEST(PrefixCache, FullyCachedPromptRecomputesItsLastBlock) {
  SchedulerCore core(cache_config(true));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto prompt = prompt_of(64, 5);  // exactly 4 blocks
  core.add_request(make_request(1, prompt, 2));
  drive(core, exec, t);
  core.add_request(make_request(2, prompt, 2));
  auto plan = core.schedule();
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->seqs[0].start_pos, 48);
  EXPECT_EQ(plan->seqs[0].num_tokens, 16);
  EXPECT_TRUE(plan->seqs[0].sample);
  t.take(core.postprocess(exec.run(*plan)));
  drive(core, exec, t);
  EXPECT_EQ(t.out(2, 0), t.out(1, 0));
  EXPECT_EQ(t.cached_tokens[2], 48);
}

TEST(PrefixCache, BlocksAreCachedOnlyAfterTheirStepRan) {
  SchedulerCore core(cache_config(true));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto prompt = prompt_of(40, 6);
  core.add_request(make_request(1, prompt, 4));
  auto p1 = core.schedule();  // computes the prompt; not run yet
  core.add_request(make_request(2, prompt, 4));
  // With overlap, step 2 is planned before step 1 ran: request 2 must not hit blocks that step 1
  // has not written yet.
  auto p2 = core.schedule();
  ASSERT_TRUE(p2);
  ASSERT_EQ(p2->seqs.size(), 2u);
  EXPECT_EQ(p2->seqs[1].start_pos, 0);
  EXPECT_EQ(p2->seqs[1].num_tokens, 40);
  t.take(core.postprocess(exec.run(*p1)));
  t.take(core.postprocess(exec.run(*p2)));
  drive(core, exec, t);
  EXPECT_EQ(t.out(1, 0), t.out(2, 0));
}

TEST(PrefixCache, LeastRecentlyUsedPrefixIsEvictedFirst) {
  auto c = cache_config(true);
  c.num_device_blocks = 8;
  SchedulerCore core(c);
  FakeExecutor exec(8, 0, 16, kVocab);
  Transcript t;
  // Three prompts of 2 full blocks each, run one after another: 6 cached blocks, 2 never used.
  for (uint64_t id = 1; id <= 3; ++id) {
    core.add_request(make_request(id, prompt_of(33, static_cast<int32_t>(id)), 1));
    drive(core, exec, t);
  }
  // Request 1's prompt is used again: it becomes the most recently used.
  core.add_request(make_request(4, prompt_of(33, 1), 1));
  drive(core, exec, t);
  EXPECT_EQ(t.cached_tokens[4], 32);
  // Now the LRU order is: prompt 2, prompt 3, prompt 1 (each 2 cached blocks), and 2 blocks
  // were never cached. A 4-block request takes the 2 free blocks and evicts 2 more: prompt 2's.
  core.add_request(make_request(5, prompt_of(60, 50), 1));
  drive(core, exec, t);
  auto cached = [&](int32_t salt) {
    auto p = prompt_of(33, salt);
    return core.kv().match_prefix(p, 32).num_tokens;
  };
  EXPECT_EQ(cached(2), 0);
  EXPECT_EQ(cached(3), 32);
  EXPECT_EQ(cached(1), 32);
  expect_all_returned(core);
}

TEST(PrefixCache, DisabledCacheNeverHits) {
  SchedulerCore core(cache_config(false));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  core.add_request(make_request(1, prompt_of(40, 4), 2));
  drive(core, exec, t);
  core.add_request(make_request(2, prompt_of(40, 4), 2));
  drive(core, exec, t);
  EXPECT_EQ(t.cached_tokens[2], 0);
  EXPECT_EQ(core.stats().prefix_hit_rate, 0.0);
  EXPECT_EQ(t.out(1, 0), t.out(2, 0));
}

// vLLM's cache_salt: blocks are shared only between requests with the same salt, and the output
// does not depend on it.
TEST(PrefixCache, SaltedRequestsShareBlocksOnlyWithTheSameSalt) {
  SchedulerCore core(cache_config(true));
  FakeExecutor exec(64, 0, 16, kVocab);
  Transcript t;
  auto salted = [](uint64_t id, const std::string& salt) {
    auto r = make_request(id, prompt_of(70, 4), 3);
    r.cache_salt = salt;
    return r;
  };
  core.add_request(salted(1, "tenant-a"));
  drive(core, exec, t);
  core.add_request(make_request(2, prompt_of(70, 4), 3));  // no salt: the unsalted root
  drive(core, exec, t);
  core.add_request(salted(3, "tenant-b"));
  drive(core, exec, t);
  core.add_request(salted(4, "tenant-a"));
  drive(core, exec, t);
  core.add_request(make_request(5, prompt_of(70, 4), 3));
  drive(core, exec, t);
  EXPECT_EQ(t.cached_tokens[1], 0);
  EXPECT_EQ(t.cached_tokens[2], 0);
  EXPECT_EQ(t.cached_tokens[3], 0);
  EXPECT_EQ(t.cached_tokens[4], 64);  // tenant-a's blocks of request 1
  EXPECT_EQ(t.cached_tokens[5], 64);  // request 2's
  for (uint64_t id = 2; id <= 5; ++id) EXPECT_EQ(t.out(id, 0), t.out(1, 0));
  expect_all_returned(core);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
