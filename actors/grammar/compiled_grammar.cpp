#include "actors/grammar/compiled_grammar.h"

#include "actors/grammar/set_walker.h"

namespace zinfer::grammar {

// The default of 256 masks of a 152k vocabulary is 4.9 MB per grammar.
CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const Vocabulary> vocabulary,
                                 size_t mask_cache_entries)
    : grammar_(std::move(grammar)),
      pushdown_(grammar_),
      vocabulary_(std::move(vocabulary)),
      mask_cache_entries_(mask_cache_entries) {}

const PositionTokens& CompiledGrammar::tokens_for(const StackArena& arena, uint32_t node) const {
  std::vector<uint32_t> frames;
  for (uint32_t n = node; n != 0 && frames.size() < kContextFrames; n = arena[n].parent) frames.push_back(arena[n].pos);
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
  for (size_t i = frames.size(); i-- > 0;) top = arena.intern(frames[i], top);
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
