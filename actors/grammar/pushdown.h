// The pushdown automaton of a Grammar, run over bytes. A state is a set of stacks (the grammar
// may be ambiguous: every reading still alive is kept); a stack is a chain of StackArena nodes,
// each a grammar position (the element to match next) and the node to return to when that
// position's alternative ends. Stacks are hash-consed in the arena, so equal stacks are equal
// ids, sets deduplicate exactly and old states stay valid (rollback is keeping the old set).
// Every stack in a set is expanded: its top is a byte-set element, or it is node 0, the bottom,
// which means "the root rule has ended" (accepting) or, in the per-position walks of
// CompiledGrammar, "this position's rule has ended" (the rest depends on the stack below).
// Tail calls do not grow the stack: entering a rule as an alternative's last element returns
// straight to the caller's caller, so x* and right recursion run in constant depth. A counted
// repetition x{m,n} is a frame at its element whose count says how many x are done.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/grammar/grammar.h"

namespace zinfer::grammar {

struct StackNode {
  uint32_t pos;        // index into Grammar::elements
  uint32_t parent;     // node id; 0 is the bottom
  uint32_t count = 0;  // at a kRepeat element: the repetitions done
};

class StackArena {
 public:
  StackArena();
  uint32_t intern(uint32_t pos, uint32_t parent, uint32_t count = 0);
  const StackNode& operator[](uint32_t id) const { return nodes_[id]; }
  size_t size() const { return nodes_.size(); }
  // Forgets the nodes made after size() was `mark` (scratch work such as a mask's token checks),
  // so that the arena of a long generation holds only the stacks of its states.
  void truncate(size_t mark);

 private:
  void grow();
  std::vector<StackNode> nodes_;
  std::vector<uint32_t> slot_of_;  // per node, its slot
  std::vector<uint32_t> slots_;  // open addressing over node ids; 0 is empty (node 0 is never looked up)
};

using StackSet = std::vector<uint32_t>;  // sorted, unique node ids

// Counts of a kRepeat frame that stand for "far from the bounds" in CompiledGrammar's token
// tables: below the minimum with many repetitions to go, or past it with many left to the maximum.
// A token shorter than the distance cannot tell them from the real count.
inline constexpr uint32_t kFarBelowMin = 0xFFFFFFF0u;
inline constexpr uint32_t kFarAboveMin = 0xFFFFFFF1u;

class Pushdown {
 public:
  explicit Pushdown(const Grammar& grammar);

  void initial(StackArena& arena, StackSet& out) const;
  // The stack {pos} over the bottom, expanded: the start of a position walk.
  void start_at(StackArena& arena, uint32_t pos, StackSet& out) const;
  void advance(StackArena& arena, const StackSet& in, uint8_t byte, StackSet& out) const;
  ByteSet next_bytes(const StackArena& arena, const StackSet& set) const;
  bool is_bytes(uint32_t pos) const { return set_of_[pos] != nullptr; }
  bool accepts(uint32_t pos, uint8_t byte) const { return set_of_[pos]->test(byte); }
  const Grammar& grammar() const { return g_; }

 private:
  void closure(StackArena& arena, uint32_t node, StackSet& out) const;
  void enter(StackArena& arena, uint32_t rule, uint32_t cont, StackSet& out) const;
  static void finish(StackSet& out);

  const Grammar& g_;
  std::vector<const ByteSet*> set_of_;  // per element: its byte set, null for rules and ends
};

}  // namespace zinfer::grammar
