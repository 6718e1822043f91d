#include "actors/grammar/compiled_grammar.h"

namespace zinfer::grammar {

namespace {
// 256 masks of a 152k vocabulary are 4.9 MB per grammar.
constexpr size_t kMaxCachedMasks = 256;
}  // namespace

CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const Vocabulary> vocabulary)
    : grammar_(std::move(grammar)),
      pushdown_(grammar_),
      vocabulary_(std::move(vocabulary)),
      positions_(grammar_.elements.size()),
      once_(new std::once_flag[grammar_.elements.size()]) {}

const PositionTokens& CompiledGrammar::tokens_at(uint32_t pos) const {
  std::call_once(once_[pos], [&] { positions_[pos] = std::make_unique<PositionTokens>(compute(pos)); });
  return *positions_[pos];
}

// A depth-first walk of the token trie carrying the state set of every prefix; a subtree is cut
// as soon as its prefix is dead inside the rule.
PositionTokens CompiledGrammar::compute(uint32_t pos) const {
  const Vocabulary& vocab = *vocabulary_;
  const auto& trie = vocab.trie();
  const auto& sorted = vocab.sorted();
  StackArena arena;
  struct Frame {
    uint32_t child;   // next child of this node to visit
    bool escaped;     // some reading left the rule before this depth
    StackSet set;     // state after this node's prefix
  };
  std::vector<Frame> frames;
  frames.push_back({trie[0].first_child, false, {}});
  pushdown_.start_at(arena, pos, frames.back().set);

  std::vector<int32_t> accepted;
  PositionTokens out;
  StackSet next;
  while (!frames.empty()) {
    Frame& top = frames.back();
    const uint32_t child = top.child;
    if (child == 0) {
      frames.pop_back();
      continue;
    }
    top.child = trie[child].next_sibling;
    const auto& node = trie[child];
    pushdown_.advance(arena, top.set, node.byte, next);
    const bool escaped = top.escaped || (!top.set.empty() && top.set.front() == 0);
    const bool alive = !next.empty();
    for (uint32_t i = node.begin; i < node.here_end; ++i) {
      if (alive) accepted.push_back(sorted[i]);
      else if (escaped) out.uncertain.push_back(sorted[i]);
    }
    const bool deeper_alive = alive && !(next.size() == 1 && next.front() == 0);
    if (deeper_alive) {
      if (node.first_child != 0) frames.push_back({node.first_child, escaped, next});
    } else if (escaped || alive) {
      // Past this prefix no reading stays inside the rule, but some left it: the longer tokens
      // depend on the stack below.
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
  std::lock_guard lock(mask_mutex_);
  auto it = masks_.find(key);
  if (it == masks_.end()) return false;
  mask = it->second;
  return true;
}

void CompiledGrammar::cache_mask(const std::string& key, const std::vector<uint32_t>& mask) const {
  std::lock_guard lock(mask_mutex_);
  if (masks_.size() >= kMaxCachedMasks) masks_.clear();
  masks_.emplace(key, mask);
}

}  // namespace zinfer::grammar
