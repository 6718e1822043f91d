#include "actors/grammar/compiled_grammar.h"

#include "actors/grammar/set_walker.h"

#include <algorithm>

namespace zinfer::grammar {

// The default of 256 masks of a 152k vocabulary is 4.9 MB per grammar.
CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const Vocabulary> vocabulary,
                                 size_t mask_cache_entries)
    : grammar_(std::move(grammar)),
      pushdown_(grammar_),
      vocabulary_(std::move(vocabulary)),
      mask_cache_entries_(mask_cache_entries) {
  for (int32_t id : vocabulary_->sorted())
    if (vocabulary_->bytes(id).size() >= kExactCounts) long_tokens_.push_back(id);
}

const PositionTokens& CompiledGrammar::tokens_for(const StackArena& arena, uint32_t node,
                                                  uint32_t& length_limit) const {
  length_limit = UINT32_MAX;
  std::vector<uint32_t> frames;
  for (uint32_t n = node, k = 0; n != 0 && k < kContextFrames; n = arena[n].parent, ++k) {
    frames.push_back(arena[n].pos);
    frames.push_back(canonical_count(arena[n].pos, arena[n].count, length_limit));
  }
  std::string key(reinterpret_cast<const char*>(frames.data()), frames.size() * sizeof(uint32_t));
  Context* context;
  {
    std::lock_guard lock(context_mutex_);
    auto& slot = contexts_[key];
    if (!slot) slot = std::make_unique<Context>();
    context = slot.get();
  }
  std::call_once(context->once, [&] { context->tokens = compute(frames); });
  return context->tokens;
}

// Each repetition consumes a byte, so a token of L bytes completes at most L of them: a count
// with at least kExactCounts repetitions to the next bound behaves, for every token shorter than
// that distance, like the far count.
uint32_t CompiledGrammar::canonical_count(uint32_t pos, uint32_t count, uint32_t& length_limit) const {
  const Element& e = grammar_.elements[pos];
  if (e.kind != Element::Kind::kRepeat) return 0;
  const Repeat& rep = grammar_.repeats[e.arg];
  const uint32_t to_min = rep.min > count ? rep.min - count : 0;
  const uint32_t to_max = rep.max - count;
  if (to_min >= kExactCounts) {
    length_limit = std::min(length_limit, to_min);
    return kFarBelowMin;
  }
  if (to_min == 0 && to_max >= kExactCounts) {
    length_limit = std::min(length_limit, to_max);
    return kFarAboveMin;
  }
  return count;
}

size_t CompiledGrammar::contexts() const {
  std::lock_guard lock(context_mutex_);
  return contexts_.size();
}

// A depth-first walk of the token trie carrying the state of every prefix (memoized per byte by
// SetWalker); a subtree is cut as soon as its prefix is dead inside the context.
PositionTokens CompiledGrammar::compute(const std::vector<uint32_t>& frames) const {
  const Vocabulary& vocab = *vocabulary_;
  const auto& trie = vocab.trie();
  const auto& sorted = vocab.sorted();
  StackArena arena;
  uint32_t top = 0;  // the context's frames over the bottom, which here means "popped out of it"
  for (size_t i = frames.size(); i >= 2; i -= 2) top = arena.intern(frames[i - 2], top, frames[i - 1]);
  SetWalker walker(pushdown_, arena);
  struct Frame {
    uint32_t child;  // next child of this node to visit
    bool escaped;    // some reading popped out of the context before this depth
    uint32_t set;    // state after this node's prefix
  };
  std::vector<Frame> stack;
  stack.push_back({trie[0].first_child, false, walker.add({top})});

  std::vector<int32_t> accepted;
  PositionTokens out;
  while (!stack.empty()) {
    Frame& f = stack.back();
    const uint32_t child = f.child;
    if (child == 0) {
      stack.pop_back();
      continue;
    }
    f.child = trie[child].next_sibling;
    const auto& node = trie[child];
    const uint32_t next = walker.step(f.set, node.byte);
    const bool escaped = f.escaped || walker.has_bottom(f.set);
    const bool alive = next != SetWalker::kDead;
    for (uint32_t i = node.begin; i < node.here_end; ++i) {
      if (alive) accepted.push_back(sorted[i]);
      else if (escaped) out.uncertain.push_back(sorted[i]);
    }
    if (walker.has_stacks(next)) {
      if (node.first_child != 0) stack.push_back({node.first_child, escaped, next});
    } else if (escaped || alive) {
      // Past this prefix no reading stays inside the context, but some left it: the longer
      // tokens depend on the stack below.
      for (uint32_t i = node.here_end; i < node.end; ++i) out.uncertain.push_back(sorted[i]);
    }
  }
  if (accepted.size() * 32 > static_cast<size_t>(vocab.mask_size())) {
    out.accepted_words.assign(vocab.mask_words(), 0);
    for (int32_t id : accepted) out.accepted_words[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
  } else {
    out.accepted_ids = std::move(accepted);
  }
  return out;
}

bool CompiledGrammar::cached_mask(const std::string& key, std::vector<uint32_t>& mask) const {
  if (mask_cache_entries_ == 0) return false;
  std::lock_guard lock(mask_mutex_);
  auto it = masks_.find(key);
  if (it == masks_.end()) return false;
  mask = it->second;
  return true;
}

void CompiledGrammar::cache_mask(const std::string& key, const std::vector<uint32_t>& mask) const {
  if (mask_cache_entries_ == 0) return;
  std::lock_guard lock(mask_mutex_);
  if (masks_.size() >= mask_cache_entries_) masks_.clear();
  masks_.emplace(key, mask);
}

}  // namespace zinfer::grammar
