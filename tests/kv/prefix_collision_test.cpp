// Crafted collisions: two different blocks that had the same key under the 64-bit mixing chain
// the prefix cache used before (invertible: the pair below was computed in a second) must not let
// one request be handed KV that was computed after another request's prefix.
#include <gtest/gtest.h>

#include "actors/kv/block_manager.h"

namespace zinfer::kv {
namespace {

constexpr int32_t kBs = 16;

// The key of the scheme before (splitmix64's finalizer over the parent and each token), kept here
// only to show that the pair below collides under it.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}
uint64_t old_chain_hash(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = mix(parent ^ (0x632be59bd9b4e019ull + tokens.size()));
  for (int32_t t : tokens) h = mix(h ^ static_cast<uint32_t>(t));
  return h;
}
constexpr uint64_t kOldRoot = 0x9e3779b97f4a7c15ull;

std::vector<int32_t> block_a() {
  std::vector<int32_t> a;
  for (int32_t i = 0; i < kBs; ++i) a.push_back(100 + i);
  return a;
}
// Found by meeting in the middle over the last three tokens (unmixing backwards from A's key).
std::vector<int32_t> block_b() {
  std::vector<int32_t> b;
  for (int32_t i = 0; i < 13; ++i) b.push_back(200 + i);
  b.insert(b.end(), {128841, 1896729190, 112005});
  return b;
}
std::vector<int32_t> block_c() { return std::vector<int32_t>(kBs, 7); }

std::vector<int32_t> concat(std::initializer_list<std::vector<int32_t>> parts, int32_t tail) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  out.push_back(tail);  // one token past the full blocks: the one a request always computes
  return out;
}

void admit(BlockManager& m, uint64_t id, const std::vector<int32_t>& toks) {
  PrefixMatch match = m.match_prefix(toks, static_cast<int32_t>(toks.size()) - 1);
  AllocationPlan plan = m.plan_allocation(id, static_cast<int32_t>(toks.size()), &match);
  ASSERT_TRUE(plan.feasible);
  m.commit(plan);
}

TEST(PrefixCollision, ThePairCollidedUnderTheOldKeyAndDoesNotUnderTheNewOne) {
  const auto a = block_a(), b = block_b();
  ASSERT_NE(a, b);
  EXPECT_EQ(old_chain_hash(kOldRoot, a), old_chain_hash(kOldRoot, b));
  EXPECT_NE(chain_block_hash(root_block_hash(), a), chain_block_hash(root_block_hash(), b));
}

// Invariant 34 (docs/architecture.md): a prefix-cache hit is the same prefix.
// The attack: block C is cached after A while A itself has been evicted; a request [B, C] whose
// B collides with A would then hit B's own block and then C's, whose KV was computed after A.
TEST(PrefixCollision, ABlockComputedAfterAnotherPrefixIsNeverHit) {
  KvConfig config;
  config.block_size = kBs;
  config.num_device_blocks = 6;
  BlockManager m(config);
  const auto a = block_a(), b = block_b(), c = block_c();

  const auto seq1 = concat({a}, 1);     // computes A
  const auto seq2 = concat({a, c}, 2);  // computes its own copy of A (admitted before seq 1 cached it), and C
  admit(m, 1, seq1);
  admit(m, 2, seq2);
  m.cache_full_blocks(1, seq1, kBs);
  m.cache_full_blocks(2, seq2, 2 * kBs);  // A's key is seq 1's block: seq 2 registers C only
  const int32_t c_block = m.block_table(2)[1];
  ASSERT_TRUE(m.device_pool().is_cached(c_block));

  m.free(1);  // A is evictable; seq 2 keeps C
  std::vector<int32_t> filler(3 * kBs, 9);
  admit(m, 3, filler);  // takes the two free blocks, then evicts A
  EXPECT_EQ(m.match_prefix(seq1, kBs).num_tokens, 0) << "A should have been evicted";

  const auto seq4 = concat({b}, 3);  // computes B, which takes the key A had under the old scheme
  m.free(3);
  admit(m, 4, seq4);
  m.cache_full_blocks(4, seq4, kBs);
  const int32_t b_block = m.block_table(4)[0];

  const auto seq5 = concat({b, c}, 4);
  PrefixMatch match = m.match_prefix(seq5, static_cast<int32_t>(seq5.size()) - 1);
  ASSERT_EQ(match.blocks.size(), 1u);  // B's block, and not C's
  EXPECT_EQ(match.blocks[0], b_block);
  EXPECT_NE(match.blocks[0], c_block);

  // [A, C] itself misses at A, which is gone: a hit needs the whole chain from the first block.
  EXPECT_EQ(m.match_prefix(seq2, static_cast<int32_t>(seq2.size()) - 1).num_tokens, 0);
}

// Salted roots (vLLM's cache_salt): blocks cached under one salt are found under that salt only,
// never under another or none, and a salted sequence registers its blocks under its own root
// again after a swap-out (its root is kept with its table).
TEST(PrefixSalt, BlocksAreSharedOnlyUnderTheSameSalt) {
  KvConfig config;
  config.block_size = kBs;
  config.num_device_blocks = 8;
  BlockManager m(config);
  const auto toks = concat({block_a(), block_c()}, 3);  // 2 full blocks + 3 tokens
  const BlockHash salt_a = salted_root_hash("tenant-a");
  EXPECT_EQ(salted_root_hash(""), root_block_hash());
  EXPECT_NE(salt_a, salted_root_hash("tenant-b"));
  PrefixMatch first = m.match_prefix(toks, static_cast<int32_t>(toks.size()) - 1, salt_a);
  AllocationPlan plan = m.plan_allocation(1, static_cast<int32_t>(toks.size()), &first);
  ASSERT_TRUE(plan.feasible);
  m.commit(plan);
  m.cache_full_blocks(1, toks, static_cast<int32_t>(toks.size()));
  const int32_t most = static_cast<int32_t>(toks.size()) - 1;
  EXPECT_EQ(m.match_prefix(toks, most, salt_a).num_tokens, 2 * kBs);
  EXPECT_EQ(m.match_prefix(toks, most, salted_root_hash("tenant-b")).num_tokens, 0);
  EXPECT_EQ(m.match_prefix(toks, most).num_tokens, 0);  // unsalted
  // And the other way: unsalted blocks are not found under a salt.
  admit(m, 2, concat({block_b()}, 1));
  m.cache_full_blocks(2, concat({block_b()}, 1), kBs);
  EXPECT_EQ(m.match_prefix(concat({block_b()}, 1), kBs).num_tokens, kBs);
  EXPECT_EQ(m.match_prefix(concat({block_b()}, 1), kBs, salt_a).num_tokens, 0);
}

}  // namespace
}  // namespace zinfer::kv
