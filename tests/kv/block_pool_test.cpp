#include "actors/kv/block_pool.h"

#include <gtest/gtest.h>

#include "actors/kv/block_hash.h"

namespace zinfer::kv {
namespace {

std::vector<int32_t> block_tokens(int32_t salt, int32_t size = 4) {
  std::vector<int32_t> t;
  for (int32_t i = 0; i < size; ++i) t.push_back(salt * 100 + i);
  return t;
}

// Invariant 3 (docs/architecture.md): blocks are the scheduler's, planned then committed in full; the executor touches only the blocks a plan names.
TEST(BlockPool, TakeAndReleaseCountReferences) {
  BlockPool pool(3, 4, true);
  EXPECT_EQ(pool.num_available(), 3);
  int32_t a = pool.take();
  int32_t b = pool.take();
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.ref_count(a), 1);
  pool.retain(a);
  EXPECT_EQ(pool.ref_count(a), 2);
  EXPECT_EQ(pool.num_available(), 1);
  pool.release(a);
  EXPECT_EQ(pool.num_available(), 1);  // still referenced once
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.num_available(), 3);
  EXPECT_EQ(pool.num_in_use(), 0);
}

TEST(BlockPool, EmptyPoolAndDoubleReleaseAreErrors) {
  BlockPool pool(1, 4, false);
  int32_t a = pool.take();
  EXPECT_THROW(pool.take(), std::logic_error);
  pool.release(a);
  EXPECT_THROW(pool.release(a), std::logic_error);
  EXPECT_THROW(pool.retain(a), std::logic_error);  // free and not cached: nothing to retain
  EXPECT_THROW(pool.release(7), std::out_of_range);
  EXPECT_THROW(BlockPool(-1, 4, false), std::invalid_argument);
}

TEST(BlockPool, CachedBlockStaysFindableAfterRelease) {
  BlockPool pool(2, 4, true);
  int32_t a = pool.take();
  auto toks = block_tokens(1);
  const BlockHash h = chain_block_hash(root_block_hash(), toks);
  pool.register_block(a, h, root_block_hash(), toks);
  pool.release(a);
  EXPECT_EQ(pool.num_available(), 2);
  EXPECT_EQ(pool.num_evictable(), 1);
  ASSERT_TRUE(pool.lookup(h, root_block_hash(), toks).has_value());
  EXPECT_EQ(*pool.lookup(h, root_block_hash(), toks), a);
  pool.retain(a);  // a hit
  EXPECT_EQ(pool.num_evictable(), 0);
  EXPECT_EQ(pool.ref_count(a), 1);
}

TEST(BlockPool, FreeBlocksAreUsedBeforeEvictingCachedOnes) {
  BlockPool pool(2, 4, true);
  int32_t a = pool.take();
  auto toks = block_tokens(1);
  const BlockHash h = chain_block_hash(root_block_hash(), toks);
  pool.register_block(a, h, root_block_hash(), toks);
  pool.release(a);
  int32_t b = pool.take();
  EXPECT_NE(b, a);
  EXPECT_TRUE(pool.lookup(h, root_block_hash(), toks).has_value());
  int32_t c = pool.take();  // only the cached block is left: it is evicted
  EXPECT_EQ(c, a);
  EXPECT_FALSE(pool.lookup(h, root_block_hash(), toks).has_value());
  EXPECT_EQ(pool.num_evictions(), 1);
}

TEST(BlockPool, EvictsLeastRecentlyReleasedFirst) {
  BlockPool pool(3, 4, true);
  std::vector<int32_t> ids;
  std::vector<BlockHash> hashes;
  for (int32_t i = 0; i < 3; ++i) {
    int32_t b = pool.take();
    auto toks = block_tokens(i);
    hashes.push_back(chain_block_hash(root_block_hash(), toks));
    pool.register_block(b, hashes.back(), root_block_hash(), toks);
    ids.push_back(b);
  }
  pool.release(ids[1]);
  pool.release(ids[0]);
  pool.release(ids[2]);
  EXPECT_EQ(pool.eviction_order(), (std::vector<int32_t>{ids[1], ids[0], ids[2]}));
  pool.retain(ids[1]);  // a hit makes it most recent once released again
  pool.release(ids[1]);
  EXPECT_EQ(pool.eviction_order(), (std::vector<int32_t>{ids[0], ids[2], ids[1]}));
  EXPECT_EQ(pool.take(), ids[0]);
  EXPECT_FALSE(pool.lookup(hashes[0], root_block_hash(), block_tokens(0)).has_value());
  EXPECT_TRUE(pool.lookup(hashes[2], root_block_hash(), block_tokens(2)).has_value());
}

// A key given by hand: the pool compares what it stored, whatever the key.
BlockHash key(uint8_t x) {
  BlockHash h;
  h.bytes.fill(x);
  return h;
}

TEST(BlockPool, HashCollisionWithOtherTokensIsNoHit) {
  BlockPool pool(2, 4, true);
  int32_t a = pool.take();
  auto toks = block_tokens(1);
  pool.register_block(a, key(42), root_block_hash(), toks);
  EXPECT_TRUE(pool.lookup(key(42), root_block_hash(), toks).has_value());
  EXPECT_FALSE(pool.lookup(key(42), root_block_hash(), block_tokens(2)).has_value());
}

// The same key and the same tokens after another prefix: no hit, since the block's KV was
// computed after the prefix it was registered with.
TEST(BlockPool, HashCollisionWithAnotherPrefixIsNoHit) {
  BlockPool pool(2, 4, true);
  int32_t a = pool.take();
  auto toks = block_tokens(1);
  pool.register_block(a, key(42), key(7), toks);
  EXPECT_TRUE(pool.lookup(key(42), key(7), toks).has_value());
  EXPECT_FALSE(pool.lookup(key(42), key(8), toks).has_value());
  EXPECT_FALSE(pool.lookup(key(42), root_block_hash(), toks).has_value());
}

TEST(BlockPool, FirstRegistrationOfAKeyWins) {
  BlockPool pool(2, 4, true);
  int32_t a = pool.take();
  int32_t b = pool.take();
  auto toks = block_tokens(3);
  pool.register_block(a, key(5), root_block_hash(), toks);
  pool.register_block(b, key(5), root_block_hash(), toks);
  EXPECT_TRUE(pool.is_cached(a));
  EXPECT_FALSE(pool.is_cached(b));
  pool.release(b);
  EXPECT_EQ(pool.num_evictable(), 0);  // b went to the free list
}

TEST(BlockPool, NoCachingMeansNoHits) {
  BlockPool pool(2, 4, false);
  int32_t a = pool.take();
  auto toks = block_tokens(1);
  pool.register_block(a, key(9), root_block_hash(), toks);
  EXPECT_FALSE(pool.lookup(key(9), root_block_hash(), toks).has_value());
  pool.release(a);
  EXPECT_EQ(pool.num_evictable(), 0);
}

TEST(BlockHash, ChainDependsOnParentAndTokens) {
  auto t1 = block_tokens(1), t2 = block_tokens(2);
  const BlockHash p1 = key(1), p2 = key(2);
  EXPECT_EQ(chain_block_hash(p1, t1), chain_block_hash(p1, t1));
  EXPECT_NE(chain_block_hash(p1, t1), chain_block_hash(p2, t1));
  EXPECT_NE(chain_block_hash(p1, t1), chain_block_hash(p1, t2));
  std::vector<int32_t> swapped = {t1[1], t1[0], t1[2], t1[3]};
  EXPECT_NE(chain_block_hash(p1, t1), chain_block_hash(p1, swapped));
  EXPECT_NE(chain_block_hash(p1, t1), p1);
}

}  // namespace
}  // namespace zinfer::kv
