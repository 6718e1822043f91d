// A pool of fixed-size KV blocks (the device pool or the host pool): reference counts, a free list,
// and, when caching is on, the prefix cache: full blocks keyed by their hash chain
// (block_hash.h). A cached block whose count drops to 0 keeps its contents and stays findable; it
// joins the LRU list and is only reused (evicted) when no never-cached block is free.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "actors/kv/block_hash.h"
#include "actors/kv/lru_list.h"

namespace zinfer::kv {

class BlockPool {
 public:
  BlockPool(int32_t num_blocks, int32_t block_size, bool caching);

  int32_t num_blocks() const { return num_blocks_; }
  int32_t block_size() const { return block_size_; }
  // Blocks a take() can return: never-cached free blocks plus evictable cached ones.
  int32_t num_available() const { return static_cast<int32_t>(free_.size()) + lru_.size(); }
  int32_t num_evictable() const { return lru_.size(); }
  int32_t num_in_use() const { return num_blocks_ - num_available(); }
  int32_t ref_count(int32_t block) const { return ref_.at(block); }
  int64_t num_evictions() const { return evictions_; }

  // A block with count 1: a free block if there is one, else the least recently used cached
  // block, which then leaves the cache. Throws std::logic_error when nothing is available
  // (callers check num_available() first: a plan is checked before it is applied).
  int32_t take();
  // +1 reference; a cached block at 0 leaves the LRU list (a prefix-cache hit).
  void retain(int32_t block);
  // -1 reference; at 0 the block goes to the LRU list if cached, else to the free list.
  void release(int32_t block);

  // The cached block under key `hash` that holds exactly `tokens` and was registered after a
  // block of key `parent`, if any: the key alone is not trusted, the block's own tokens and its
  // prefix chain (the parent's full key) must agree too.
  std::optional<int32_t> lookup(const BlockHash& hash, const BlockHash& parent, std::span<const int32_t> tokens) const;
  bool is_cached(int32_t block) const { return cached_[block]; }
  // Makes a full, computed block findable under `hash`. No-op when caching is off or another
  // block already holds that key (the first copy wins; this one stays private to its sequence).
  void register_block(int32_t block, const BlockHash& hash, const BlockHash& parent, std::span<const int32_t> tokens);

  // Cached, unreferenced blocks from first to last to be evicted (tests, statistics).
  std::vector<int32_t> eviction_order() const { return lru_.in_order(); }

 private:
  void check_id(int32_t block) const;
  void uncache(int32_t block);

  int32_t num_blocks_;
  int32_t block_size_;
  bool caching_;
  std::vector<int32_t> ref_;
  std::vector<bool> cached_;
  std::vector<BlockHash> hash_;
  std::vector<BlockHash> parent_;  // the key of the block before each cached one
  std::vector<int32_t> tokens_;    // [num_blocks * block_size]: the tokens of cached blocks
  std::vector<int32_t> free_;    // never-cached blocks with count 0 (a stack)
  LruList lru_;
  std::unordered_map<BlockHash, int32_t, BlockHashHasher> by_hash_;
  int64_t evictions_ = 0;
};

}  // namespace zinfer::kv
