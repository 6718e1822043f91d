#include "actors/grammar/pushdown.h"

#include <algorithm>

namespace zinfer::grammar {

namespace {
inline uint64_t mix(uint32_t pos, uint32_t parent, uint32_t count) {
  uint64_t k = ((static_cast<uint64_t>(pos) << 32) | parent) ^ (static_cast<uint64_t>(count) * 0x9E3779B97F4A7C15ULL);
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}
}  // namespace

StackArena::StackArena() : nodes_{StackNode{UINT32_MAX, 0, 0}}, slot_of_{0}, slots_(64, 0) {}

uint32_t StackArena::intern(uint32_t pos, uint32_t parent, uint32_t count) {
  size_t mask = slots_.size() - 1;
  for (size_t i = mix(pos, parent, count) & mask;; i = (i + 1) & mask) {
    const uint32_t id = slots_[i];
    if (id == 0) {
      const auto fresh = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back({pos, parent, count});
      slot_of_.push_back(static_cast<uint32_t>(i));
      slots_[i] = fresh;
      if (nodes_.size() * 2 > slots_.size()) grow();
      return fresh;
    }
    if (nodes_[id].pos == pos && nodes_[id].parent == parent && nodes_[id].count == count) return id;
  }
}

void StackArena::grow() {
  std::vector<uint32_t> slots(slots_.size() * 2, 0);
  const size_t mask = slots.size() - 1;
  for (uint32_t id = 1; id < nodes_.size(); ++id) {
    size_t i = mix(nodes_[id].pos, nodes_[id].parent, nodes_[id].count) & mask;
    while (slots[i] != 0) i = (i + 1) & mask;
    slots[i] = id;
    slot_of_[id] = static_cast<uint32_t>(i);
  }
  slots_ = std::move(slots);
}

// Linear probing allows removing the latest insertions in reverse order: a probe chain through a
// removed slot can only lead to nodes inserted later, which are removed too.
void StackArena::truncate(size_t mark) {
  if (mark < 1) mark = 1;
  while (nodes_.size() > mark) {
    slots_[slot_of_.back()] = 0;
    slot_of_.pop_back();
    nodes_.pop_back();
  }
}

Pushdown::Pushdown(const Grammar& grammar) : g_(grammar), set_of_(grammar.elements.size(), nullptr) {
  for (size_t p = 0; p < g_.elements.size(); ++p)
    if (g_.elements[p].kind == Element::Kind::kBytes) set_of_[p] = &g_.byte_sets[g_.elements[p].arg];
}

void Pushdown::finish(StackSet& out) {
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void Pushdown::enter(StackArena& arena, uint32_t rule, uint32_t cont, StackSet& out) const {
  for (uint32_t start : g_.rules[rule].alternatives) {
    if (g_.elements[start].kind == Element::Kind::kEnd) closure(arena, cont, out);
    else closure(arena, arena.intern(start, cont), out);
  }
}

void Pushdown::closure(StackArena& arena, uint32_t node, StackSet& out) const {
  while (true) {
    if (node == 0) {
      out.push_back(0);
      return;
    }
    const StackNode n = arena[node];
    const Element& e = g_.elements[n.pos];
    switch (e.kind) {
      case Element::Kind::kBytes:
        out.push_back(node);
        return;
      case Element::Kind::kEnd:
        node = n.parent;
        continue;
      case Element::Kind::kRule: {
        const bool tail = g_.elements[n.pos + 1].kind == Element::Kind::kEnd;
        const uint32_t cont = tail ? n.parent : arena.intern(n.pos + 1, n.parent);
        enter(arena, e.arg, cont, out);
        return;
      }
      case Element::Kind::kRepeat: {
        // One more x (returning here with the count up), or, with enough done, what follows.
        const Repeat& rep = g_.repeats[e.arg];
        const bool far = n.count == kFarBelowMin || n.count == kFarAboveMin;
        const bool more = far || n.count < rep.max;
        const bool done = far ? n.count == kFarAboveMin : n.count >= rep.min;
        if (more) enter(arena, rep.rule, arena.intern(n.pos, n.parent, far ? n.count : n.count + 1), out);
        if (!done) return;
        if (g_.elements[n.pos + 1].kind == Element::Kind::kEnd) {
          node = n.parent;
        } else {
          node = arena.intern(n.pos + 1, n.parent);
        }
        continue;
      }
    }
  }
}

void Pushdown::initial(StackArena& arena, StackSet& out) const {
  out.clear();
  enter(arena, g_.root, 0, out);
  finish(out);
}

void Pushdown::start_at(StackArena& arena, uint32_t pos, StackSet& out) const {
  out.clear();
  closure(arena, arena.intern(pos, 0), out);
  finish(out);
}

void Pushdown::advance(StackArena& arena, const StackSet& in, uint8_t byte, StackSet& out) const {
  out.clear();
  for (uint32_t node : in) {
    if (node == 0) continue;
    const StackNode n = arena[node];
    if (!set_of_[n.pos]->test(byte)) continue;
    if (g_.elements[n.pos + 1].kind == Element::Kind::kEnd) closure(arena, n.parent, out);
    else closure(arena, arena.intern(n.pos + 1, n.parent), out);
  }
  if (out.size() > 1) finish(out);
}

ByteSet Pushdown::next_bytes(const StackArena& arena, const StackSet& set) const {
  ByteSet bytes;
  for (uint32_t node : set)
    if (node != 0) bytes |= *set_of_[arena[node].pos];
  return bytes;
}

}  // namespace zinfer::grammar
