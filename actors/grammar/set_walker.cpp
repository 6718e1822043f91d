#include "actors/grammar/set_walker.h"

namespace zinfer::grammar {

SetWalker::SetWalker(const Pushdown& pda, StackArena& arena) : pda_(pda), arena_(arena) { add({}); }

uint32_t SetWalker::add(const StackSet& set) {
  std::string key(reinterpret_cast<const char*>(set.data()), set.size() * sizeof(uint32_t));
  auto [it, inserted] = ids_.try_emplace(std::move(key), static_cast<uint32_t>(sets_.size()));
  if (inserted) {
    sets_.push_back(set);
    next_.resize(next_.size() + 256, kUnknown);
  }
  return it->second;
}

uint32_t SetWalker::step(uint32_t id, uint8_t byte) {
  uint32_t& next = next_[static_cast<size_t>(id) * 256 + byte];
  if (next != kUnknown) return next;
  if (id == kDead) return next = kDead;
  pda_.advance(arena_, sets_[id], byte, scratch_);
  const uint32_t result = add(scratch_);
  next_[static_cast<size_t>(id) * 256 + byte] = result;  // add() may have moved next_
  return result;
}

}  // namespace zinfer::grammar
