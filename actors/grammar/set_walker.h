// Walks of the pushdown automaton with memoized transitions: state sets get small ids and each
// (set, byte) transition is computed once, so walking many tokens that share prefixes or pass
// through the same states (the token trie, the uncertain tokens of a mask) costs a table lookup
// per byte instead of a closure. The sets live in the given arena; a walker is scratch for one
// computation and must not outlive a truncation of the arena below its nodes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/grammar/pushdown.h"

namespace zinfer::grammar {

class SetWalker {
 public:
  static constexpr uint32_t kDead = 0;  // the empty set

  SetWalker(const Pushdown& pda, StackArena& arena);
  uint32_t add(const StackSet& set);
  uint32_t step(uint32_t id, uint8_t byte);
  bool has_bottom(uint32_t id) const { return !sets_[id].empty() && sets_[id].front() == 0; }
  // Members other than the bottom: the set can consume more bytes.
  bool has_stacks(uint32_t id) const { return sets_[id].size() > (has_bottom(id) ? 1u : 0u); }

 private:
  static constexpr uint32_t kUnknown = UINT32_MAX;
  const Pushdown& pda_;
  StackArena& arena_;
  std::vector<StackSet> sets_;
  std::vector<uint32_t> next_;  // 256 per set
  std::unordered_map<std::string, uint32_t> ids_;
  StackSet scratch_;
};

}  // namespace zinfer::grammar
