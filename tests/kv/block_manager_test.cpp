#include "actors/kv/block_manager.h"

#include <numeric>

#include <gtest/gtest.h>

namespace zinfer::kv {
namespace {

constexpr int32_t kBs = 4;

KvConfig config(int32_t device, int32_t host = 0, bool caching = true) {
  KvConfig c;
  c.block_size = kBs;
  c.num_device_blocks = device;
  c.num_host_blocks = host;
  c.enable_prefix_caching = caching;
  return c;
}

std::vector<int32_t> tokens(int32_t n, int32_t salt = 0) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), salt * 1000);
  return t;
}

// Allocates `n` slots for a new sequence with these tokens (prefix lookup up to n - 1).
Allocation admit(BlockManager& m, uint64_t id, const std::vector<int32_t>& toks) {
  PrefixMatch match = m.match_prefix(toks, static_cast<int32_t>(toks.size()) - 1);
  AllocationPlan plan = m.plan_allocation(id, static_cast<int32_t>(toks.size()), &match);
  EXPECT_TRUE(plan.feasible);
  return m.commit(plan);
}

TEST(BlockManager, AllocatesBlocksForSlots) {
  BlockManager m(config(8));
  admit(m, 1, tokens(6));
  EXPECT_EQ(m.block_table(1).size(), 2u);
  EXPECT_EQ(m.num_slots(1), 6);
  // Growing within the last block needs no block; crossing into a new one takes one.
  AllocationPlan p = m.plan_allocation(1, 8);
  EXPECT_EQ(p.num_fresh_blocks, 0);
  m.commit(p);
  p = m.plan_allocation(1, 9);
  EXPECT_EQ(p.num_fresh_blocks, 1);
  m.commit(p);
  EXPECT_EQ(m.block_table(1).size(), 3u);
  EXPECT_EQ(m.stats().free_device_blocks, 5);
}

// Invariant 3 (docs/architecture.md): blocks are the scheduler's, planned then committed in full; the executor touches only the blocks a plan names.
TEST(BlockManager, InfeasiblePlanChangesNothing) {
  BlockManager m(config(3));
  admit(m, 1, tokens(8));
  const auto table = m.block_table(1);
  const auto before = m.stats();
  AllocationPlan p = m.plan_allocation(1, 13);  // needs 2 more blocks, 1 is free
  EXPECT_FALSE(p.feasible);
  EXPECT_EQ(p.blocks_needed, 2);
  EXPECT_THROW(m.commit(p), std::logic_error);
  EXPECT_EQ(m.block_table(1), table);
  EXPECT_EQ(m.num_slots(1), 8);
  EXPECT_EQ(m.stats().free_device_blocks, before.free_device_blocks);
  EXPECT_FALSE(m.can_allocate(2, 9));
  EXPECT_FALSE(m.has(2));
}

// Invariant 3 (docs/architecture.md): blocks are the scheduler's, planned then committed in full; the executor touches only the blocks a plan names.
TEST(BlockManager, StalePlanIsRefused) {
  BlockManager m(config(4));
  AllocationPlan p1 = m.plan_allocation(1, 4);
  AllocationPlan p2 = m.plan_allocation(2, 4);
  m.commit(p1);
  EXPECT_THROW(m.commit(p2), std::logic_error);
  EXPECT_FALSE(m.has(2));
}

TEST(BlockManager, PrefixCacheServesComputedFullBlocks) {
  BlockManager m(config(16));
  auto prompt = tokens(10);
  admit(m, 1, prompt);
  // Not yet computed: nothing is findable.
  EXPECT_EQ(m.match_prefix(prompt, 9).num_tokens, 0);
  m.cache_full_blocks(1, prompt, 10);  // 2 full blocks computed
  PrefixMatch match = m.match_prefix(prompt, 9);
  EXPECT_EQ(match.num_tokens, 8);
  EXPECT_EQ(match.blocks, std::vector<int32_t>(m.block_table(1).begin(), m.block_table(1).begin() + 2));

  Allocation a = admit(m, 2, prompt);
  EXPECT_EQ(a.num_cached_tokens, 8);
  EXPECT_EQ(m.block_table(2)[0], m.block_table(1)[0]);
  EXPECT_EQ(m.block_table(2)[1], m.block_table(1)[1]);
  EXPECT_NE(m.block_table(2)[2], m.block_table(1)[2]);  // the partial block is private
  EXPECT_EQ(m.device_pool().ref_count(m.block_table(1)[0]), 2);
  // Hit rate: 8 of the 20 looked-up tokens (10 for each admission).
  EXPECT_DOUBLE_EQ(m.stats().prefix_hit_rate, 8.0 / 20.0);

  // A different second block: only the first block matches (the chain stops at a miss).
  auto other = prompt;
  other[5] = -7;
  EXPECT_EQ(m.match_prefix(other, 9).num_tokens, 4);
  // Same tokens shifted by one block: the chain key differs though block 1's tokens are equal.
  std::vector<int32_t> shifted(prompt.begin() + 4, prompt.end());
  EXPECT_EQ(m.match_prefix(shifted, 5).num_tokens, 0);
}

TEST(BlockManager, MatchRespectsTheLimit) {
  BlockManager m(config(16));
  auto prompt = tokens(8);
  admit(m, 1, prompt);
  m.cache_full_blocks(1, prompt, 8);
  EXPECT_EQ(m.match_prefix(prompt, 8).num_tokens, 8);
  EXPECT_EQ(m.match_prefix(prompt, 7).num_tokens, 4);  // the last block is recomputed
}

TEST(BlockManager, CachedBlocksSurviveFreeAndAreEvictedTailFirst) {
  BlockManager m(config(4));
  auto prompt = tokens(12);
  admit(m, 1, prompt);
  m.cache_full_blocks(1, prompt, 12);
  auto table = m.block_table(1);
  m.free(1);
  EXPECT_EQ(m.stats().free_device_blocks, 4);
  EXPECT_EQ(m.stats().cached_free_blocks, 3);
  // The tail block is first in line for eviction, the head block last.
  EXPECT_EQ(m.device_pool().eviction_order(), (std::vector<int32_t>{table[2], table[1], table[0]}));
  // A 2-block request takes the never-cached block and evicts the tail: the first 2 blocks hit.
  admit(m, 2, tokens(8, 5));
  EXPECT_EQ(m.match_prefix(prompt, 12).num_tokens, 8);
  m.free(2);
  admit(m, 3, prompt);
  EXPECT_EQ(m.block_table(3)[0], table[0]);
  EXPECT_EQ(m.block_table(3)[1], table[1]);
}

TEST(BlockManager, EvictableHitsCountAgainstCapacity) {
  BlockManager m(config(3));
  auto prompt = tokens(8);
  admit(m, 1, prompt);
  m.cache_full_blocks(1, prompt, 8);
  m.free(1);  // 2 cached blocks, 1 free block
  auto longer = tokens(12);
  PrefixMatch match = m.match_prefix(longer, 11);
  ASSERT_EQ(match.num_tokens, 8);
  // 2 evictable hits + 1 fresh = 3 blocks of capacity: fits exactly; one more slot would not.
  EXPECT_TRUE(m.plan_allocation(2, 12, &match).feasible);
  EXPECT_FALSE(m.plan_allocation(2, 13, &match).feasible);
  m.commit(m.plan_allocation(2, 12, &match));
  EXPECT_EQ(m.stats().free_device_blocks, 0);
}

TEST(BlockManager, ForkSharesBlocksAndCopiesOnWrite) {
  BlockManager m(config(8));
  admit(m, 1, tokens(6));  // blocks: [full, partial(2 of 4)]
  m.fork(1, 2);
  m.fork(1, 3);
  const auto parent = m.block_table(1);
  EXPECT_EQ(m.block_table(2), parent);
  EXPECT_EQ(m.device_pool().ref_count(parent[1]), 3);

  AllocationPlan p = m.plan_allocation(2, 7);  // writes position 6 into the shared partial block
  EXPECT_TRUE(p.copy_on_write);
  Allocation a = m.commit(p);
  ASSERT_EQ(a.copies.size(), 1u);
  EXPECT_EQ(a.copies[0].src, parent[1]);
  EXPECT_EQ(a.copies[0].dst, m.block_table(2)[1]);
  EXPECT_EQ(m.block_table(2)[0], parent[0]);  // the full block stays shared
  EXPECT_EQ(m.device_pool().ref_count(parent[1]), 2);

  EXPECT_EQ(m.commit(m.plan_allocation(3, 7)).copies.size(), 1u);
  // The last owner writes in place.
  AllocationPlan last = m.plan_allocation(1, 7);
  EXPECT_FALSE(last.copy_on_write);
  EXPECT_TRUE(m.commit(last).copies.empty());
  EXPECT_EQ(m.block_table(1), parent);

  m.free(1);
  m.free(2);
  m.free(3);
  EXPECT_EQ(m.stats().free_device_blocks, 8);
}

TEST(BlockManager, ForkAtABlockBoundaryNeedsNoCopy) {
  BlockManager m(config(8));
  admit(m, 1, tokens(4));
  m.fork(1, 2);
  AllocationPlan p = m.plan_allocation(2, 5);
  EXPECT_FALSE(p.copy_on_write);
  EXPECT_EQ(p.num_fresh_blocks, 1);
}

TEST(BlockManager, SwapOutAndInMoveEveryBlock) {
  BlockManager m(config(4, 4));
  auto prompt = tokens(10);
  admit(m, 1, prompt);
  const auto device_table = m.block_table(1);
  SwapPlan out = m.plan_swap_out(1);
  ASSERT_TRUE(out.feasible);
  auto copies = m.commit_swap_out(out);
  ASSERT_EQ(copies.size(), 3u);
  for (size_t i = 0; i < copies.size(); ++i) {
    EXPECT_EQ(copies[i].src, device_table[i]);
    EXPECT_EQ(copies[i].dst, m.block_table(1)[i]);
  }
  EXPECT_EQ(m.residence(1), Residence::kHost);
  EXPECT_EQ(m.stats().free_device_blocks, 4);
  EXPECT_EQ(m.stats().free_host_blocks, 1);
  EXPECT_THROW(m.plan_allocation(1, 11), std::logic_error);

  // Swap-in with a reserve that does not fit changes nothing.
  EXPECT_FALSE(m.plan_swap_in(1, 2).feasible);
  SwapPlan in = m.plan_swap_in(1, 1);
  ASSERT_TRUE(in.feasible);
  const auto host_table = m.block_table(1);
  auto back = m.commit_swap_in(in);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].src, host_table[i]);
    EXPECT_EQ(back[i].dst, m.block_table(1)[i]);
  }
  EXPECT_EQ(m.residence(1), Residence::kDevice);
  EXPECT_EQ(m.num_slots(1), 10);
  EXPECT_EQ(m.stats().free_host_blocks, 4);
  m.free(1);
  EXPECT_EQ(m.stats().free_device_blocks, 4);
}

TEST(BlockManager, SwapOutWithoutHostRoomChangesNothing) {
  BlockManager m(config(4, 2));
  admit(m, 1, tokens(10));
  const auto table = m.block_table(1);
  SwapPlan out = m.plan_swap_out(1);
  EXPECT_FALSE(out.feasible);
  EXPECT_THROW(m.commit_swap_out(out), std::logic_error);
  EXPECT_EQ(m.block_table(1), table);
  EXPECT_EQ(m.residence(1), Residence::kDevice);
  EXPECT_EQ(m.stats().free_host_blocks, 2);
}

TEST(BlockManager, SwappingASharedSequenceKeepsTheOtherOwner) {
  BlockManager m(config(4, 4));
  admit(m, 1, tokens(8));
  m.fork(1, 2);
  m.commit_swap_out(m.plan_swap_out(2));
  EXPECT_EQ(m.device_pool().ref_count(m.block_table(1)[0]), 1);
  EXPECT_EQ(m.stats().free_device_blocks, 2);
  m.free(2);
  EXPECT_EQ(m.stats().free_host_blocks, 4);
  m.free(1);
  EXPECT_EQ(m.stats().free_device_blocks, 4);
}

TEST(BlockManager, UsageAndUnknownSequences) {
  BlockManager m(config(4));
  admit(m, 1, tokens(8));
  EXPECT_DOUBLE_EQ(m.stats().usage, 0.5);
  EXPECT_FALSE(m.free(99));
  EXPECT_THROW(m.block_table(99), std::out_of_range);
  EXPECT_THROW(m.fork(99, 100), std::out_of_range);
  EXPECT_THROW(m.fork(1, 1), std::logic_error);
}

TEST(BlockManager, CachingOffNeverHits) {
  BlockManager m(config(8, 0, false));
  auto prompt = tokens(8);
  admit(m, 1, prompt);
  m.cache_full_blocks(1, prompt, 8);
  EXPECT_EQ(m.match_prefix(prompt, 8).num_tokens, 0);
}

}  // namespace
}  // namespace zinfer::kv

namespace zinfer::kv {
namespace {

// BlockManager remembers the entry it found last (a step asks about one sequence several times
// in a row): freeing that sequence, re-admitting its id, and copying the manager must not leave
// an answer that points at a freed or foreign entry.
TEST(BlockManager, LastLookupForgetsFreedSequencesAndCopies) {
  BlockManager m(config(16));
  admit(m, 1, tokens(6, 1));
  admit(m, 2, tokens(6, 2));
  const std::vector<int32_t> first = m.block_table(1);
  EXPECT_EQ(m.num_slots(1), 6);
  ASSERT_TRUE(m.free(1));
  EXPECT_FALSE(m.has(1));
  EXPECT_THROW(m.block_table(1), std::out_of_range);
  EXPECT_TRUE(m.plan_allocation(1, 3).new_sequence);
  admit(m, 1, tokens(9, 3));  // the same id, new blocks
  EXPECT_EQ(m.num_slots(1), 9);
  EXPECT_EQ(m.block_table(1).size(), 3u);

  BlockManager copy = m;
  const std::vector<int32_t> table = copy.block_table(1);
  ASSERT_TRUE(m.free(1));
  EXPECT_EQ(copy.block_table(1), table);  // the copy answers from its own entries
  m.commit(m.plan_allocation(2, 12));
  EXPECT_EQ(copy.num_slots(2), 6);
  EXPECT_EQ(m.num_slots(2), 12);
  EXPECT_NE(first, std::vector<int32_t>{});
}

}  // namespace
}  // namespace zinfer::kv

namespace zinfer::kv {
namespace {

// table_generation changes exactly when a table changes other than at its end.
TEST(BlockManager, TableGenerationChangesUnlessBlocksAreOnlyAppended) {
  BlockManager m(config(16, 8));
  admit(m, 1, tokens(6, 1));
  const uint64_t g1 = m.table_generation(1);
  EXPECT_NE(g1, 0u);
  m.commit(m.plan_allocation(1, 13));  // two blocks appended
  EXPECT_EQ(m.table_generation(1), g1);
  m.fork(1, 2);
  EXPECT_NE(m.table_generation(2), g1);
  EXPECT_EQ(m.table_generation(1), g1);
  AllocationPlan cow = m.plan_allocation(2, 14);  // the shared, partly filled last block
  ASSERT_TRUE(cow.copy_on_write);
  m.commit(cow);
  const uint64_t g2 = m.table_generation(2);
  EXPECT_NE(g2, g1);
  m.commit_swap_out(m.plan_swap_out(2));
  const uint64_t g3 = m.table_generation(2);
  EXPECT_NE(g3, g2);
  m.commit_swap_in(m.plan_swap_in(2));
  EXPECT_NE(m.table_generation(2), g3);
  m.free(1);
  admit(m, 1, tokens(6, 1));
  EXPECT_NE(m.table_generation(1), g1);  // the same id, a new table
}

}  // namespace
}  // namespace zinfer::kv

namespace zinfer::kv {
namespace {

// Block sizes that are powers of two take shifts and masks, the others divisions: the same
// answers either way.
TEST(BlockManager, BlockArithmeticForEveryBlockSize) {
  for (int32_t bs : {1, 3, 4, 6, 16}) {
    SCOPED_TRACE("block size " + std::to_string(bs));
    KvConfig c;
    c.block_size = bs;
    c.num_device_blocks = 64;
    BlockManager m(c);
    for (int64_t n : {0, 1, 2, 3, 4, 5, 15, 16, 17, 47, 48, 49}) EXPECT_EQ(m.blocks_for(n), (n + bs - 1) / bs) << n;
    m.commit(m.plan_allocation(1, 2 * bs + 1));
    m.fork(1, 2);
    // One slot into its last block: the shared block is copied before a write, unless the
    // block size is 1 (every block is full).
    AllocationPlan p = m.plan_allocation(2, 2 * bs + 2);
    EXPECT_EQ(p.copy_on_write, bs > 1);
    m.fork(1, 3);
    m.commit(m.plan_allocation(1, 3 * bs));  // fills its own last block
    EXPECT_FALSE(m.plan_allocation(1, 3 * bs + 1).copy_on_write);  // at a boundary: a fresh block
  }
}

}  // namespace
}  // namespace zinfer::kv
