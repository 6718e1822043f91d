#include "actors/kv/block_pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zinfer::kv {

BlockPool::BlockPool(int32_t num_blocks, int32_t block_size, bool caching)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      caching_(caching),
      ref_(std::max(num_blocks, 0), 0),
      cached_(std::max(num_blocks, 0), false),
      hash_(caching ? std::max(num_blocks, 0) : 0),
      parent_(caching ? std::max(num_blocks, 0) : 0),
      tokens_(caching ? static_cast<size_t>(std::max(num_blocks, 0)) * std::max(block_size, 0) : 0),
      lru_(std::max(num_blocks, 0)) {
  if (num_blocks < 0) throw std::invalid_argument("BlockPool: num_blocks must be >= 0, got " + std::to_string(num_blocks));
  if (block_size <= 0) throw std::invalid_argument("BlockPool: block_size must be > 0, got " + std::to_string(block_size));
  free_.reserve(num_blocks);
  // At most one key per block: sized once, so that registering blocks as sequences grow never
  // rehashes the whole cache in the middle of a step.
  if (caching_) by_hash_.reserve(static_cast<size_t>(num_blocks));
  // Stack order: block 0 is taken first, which keeps tests and logs readable.
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);
}

void BlockPool::check_id(int32_t block) const {
  if (block < 0 || block >= num_blocks_) {
    throw std::out_of_range("BlockPool: block " + std::to_string(block) + " outside [0, " +
                            std::to_string(num_blocks_) + ")");
  }
}

void BlockPool::uncache(int32_t block) {
  by_hash_.erase(hash_[block]);
  cached_[block] = false;
  ++evictions_;
}

int32_t BlockPool::take() {
  int32_t block;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    block = lru_.pop_front();
    uncache(block);
  } else {
    throw std::logic_error("BlockPool: no block available (a plan should have checked)");
  }
  ref_[block] = 1;
  return block;
}

void BlockPool::retain(int32_t block) {
  check_id(block);
  if (ref_[block] == 0) {
    if (!cached_[block]) throw std::logic_error("BlockPool: retain of free block " + std::to_string(block));
    lru_.remove(block);
  }
  ++ref_[block];
}

void BlockPool::release(int32_t block) {
  check_id(block);
  if (ref_[block] <= 0) throw std::logic_error("BlockPool: release of unreferenced block " + std::to_string(block));
  if (--ref_[block] > 0) return;
  if (cached_[block]) {
    lru_.push_back(block);
  } else {
    free_.push_back(block);
  }
}

std::optional<int32_t> BlockPool::lookup(const BlockHash& hash, const BlockHash& parent,
                                         std::span<const int32_t> tokens) const {
  if (!caching_) return std::nullopt;
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  const int32_t block = it->second;
  const int32_t* stored = tokens_.data() + static_cast<size_t>(block) * block_size_;
  if (parent_[block] != parent || tokens.size() != static_cast<size_t>(block_size_) ||
      !std::equal(tokens.begin(), tokens.end(), stored)) {
    return std::nullopt;  // a collision: another prefix or other tokens under the same key
  }
  return block;
}

void BlockPool::register_block(int32_t block, const BlockHash& hash, const BlockHash& parent,
                               std::span<const int32_t> tokens) {
  check_id(block);
  if (!caching_ || cached_[block]) return;
  if (tokens.size() != static_cast<size_t>(block_size_)) {
    throw std::invalid_argument("BlockPool: only full blocks are cached; block " + std::to_string(block) +
                                " got " + std::to_string(tokens.size()) + " tokens");
  }
  if (ref_[block] <= 0) throw std::logic_error("BlockPool: register of free block " + std::to_string(block));
  if (!by_hash_.emplace(hash, block).second) return;
  cached_[block] = true;
  hash_[block] = hash;
  parent_[block] = parent;
  std::copy(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<size_t>(block) * block_size_);
}

}  // namespace zinfer::kv
