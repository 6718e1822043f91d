#include "actors/grammar/matcher.h"

#include "actors/grammar/set_walker.h"

#include <algorithm>
#include <cstring>

namespace zinfer::grammar {

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  State initial;
  grammar_->pushdown().initial(arena_, initial.set);
  history_.push_back(std::move(initial));
}

bool Matcher::is_accepting() const {
  const State& s = history_.back();
  return !s.terminated && !s.set.empty() && s.set.front() == 0;
}

ByteSet Matcher::allowed_bytes() const {
  if (is_terminated()) return {};
  return grammar_->pushdown().next_bytes(arena_, history_.back().set);
}

bool Matcher::is_terminated() const { return history_.back().terminated; }

bool Matcher::advance(std::string_view bytes, StackSet& out) {
  const Pushdown& pda = grammar_->pushdown();
  StackSet current = history_.back().set;
  for (char c : bytes) {
    pda.advance(arena_, current, static_cast<uint8_t>(c), out);
    if (out.empty()) return false;
    current.swap(out);
  }
  out.swap(current);
  return true;
}

bool Matcher::accept_bytes(std::string_view bytes) {
  if (is_terminated()) return false;
  const size_t mark = arena_.size();
  State next;
  if (!advance(bytes, next.set)) {
    arena_.truncate(mark);
    return false;
  }
  history_.push_back(std::move(next));
  return true;
}

bool Matcher::accept_token(int32_t id) {
  if (is_terminated()) return false;
  const Vocabulary& vocab = grammar_->vocabulary();
  if (vocab.is_stop(id)) {
    if (!is_accepting()) return false;
    history_.push_back(State{{}, true});
    return true;
  }
  if (!vocab.usable(id)) return false;
  return accept_bytes(vocab.bytes(id));
}

void Matcher::rollback(size_t tokens) {
  tokens = std::min(tokens, history_.size() - 1);
  history_.resize(history_.size() - tokens);
}

// The positions (and counts) of every stack of the state, top to bottom: equal keys are equal
// states in any matcher of the grammar.
std::string Matcher::state_key() const {
  std::string key;
  for (uint32_t node : history_.back().set) {
    for (uint32_t n = node; n != 0; n = arena_[n].parent) {
      const uint32_t pos_count[2] = {arena_[n].pos, arena_[n].count};
      key.append(reinterpret_cast<const char*>(pos_count), sizeof pos_count);
    }
    key.append("\xff\xff\xff\xff", 4);
  }
  return key;
}

void Matcher::fill_mask(std::span<uint32_t> words) {
  const Vocabulary& vocab = grammar_->vocabulary();
  const size_t n = vocab.mask_words();
  std::fill(words.begin(), words.end(), 0u);
  if (is_terminated()) return;
  std::vector<uint32_t> mask;
  const std::string key = state_key();
  if (!grammar_->cached_mask(key, mask)) {
    mask.assign(n, 0);
    const StackSet& set = history_.back().set;
    struct Work {
      uint32_t node;
      const PositionTokens* table;
      uint32_t length_limit;
    };
    std::vector<Work> work;
    std::vector<uint32_t> limited;  // accepted tokens of a table that holds for short tokens only
    for (uint32_t node : set) {
      if (node == 0) continue;
      uint32_t limit;
      const PositionTokens& t = grammar_->tokens_for(arena_, node, limit);
      work.push_back({node, &t, limit});
      std::vector<uint32_t>* target = &mask;
      if (limit != UINT32_MAX) {
        limited.assign(n, 0);
        target = &limited;
      }
      if (!t.accepted_words.empty()) {
        for (size_t w = 0; w < n; ++w) (*target)[w] |= t.accepted_words[w];
      } else {
        for (int32_t id : t.accepted_ids) (*target)[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
      }
      if (limit != UINT32_MAX) {
        for (int32_t id : grammar_->long_tokens())
          if (vocab.bytes(id).size() >= limit) limited[static_cast<size_t>(id) >> 5] &= ~(1u << (id & 31));
        for (size_t w = 0; w < n; ++w) mask[w] |= limited[w];
      }
    }
    // The tokens the tables leave open, walked from the real stack in trie order: consecutive
    // tokens share their common prefix's states, and the walker memoizes every transition.
    const size_t mark = arena_.size();
    {
      SetWalker walker(grammar_->pushdown(), arena_);
      std::vector<uint32_t> states;  // states[d]: after the first d bytes of `prefix`
      auto check = [&](uint32_t node, const std::vector<int32_t>& ids, uint32_t min_length) {
        states.assign(1, walker.add({node}));
        std::string_view prefix;
        for (int32_t id : ids) {
          const std::string& bytes = vocab.bytes(id);
          if (bytes.size() < min_length) continue;
          uint32_t& word = mask[static_cast<size_t>(id) >> 5];
          const uint32_t bit = 1u << (id & 31);
          size_t common = 0;
          while (common < prefix.size() && common < bytes.size() && prefix[common] == bytes[common]) ++common;
          states.resize(common + 1);
          if (!(word & bit)) {
            while (states.size() <= bytes.size() && states.back() != SetWalker::kDead)
              states.push_back(walker.step(states.back(), static_cast<uint8_t>(bytes[states.size() - 1])));
            if (states.size() == bytes.size() + 1 && states.back() != SetWalker::kDead) word |= bit;
          }
          prefix = std::string_view(bytes).substr(0, states.size() - 1);
        }
      };
      for (const Work& w : work) {
        check(w.node, w.table->uncertain, 0);
        if (w.length_limit != UINT32_MAX) check(w.node, grammar_->long_tokens(), w.length_limit);
      }
    }
    arena_.truncate(mark);
    if (is_accepting())
      for (int32_t id : vocab.stop_ids()) mask[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
    grammar_->cache_mask(key, mask);
  }
  std::copy(mask.begin(), mask.end(), words.begin());
}

}  // namespace zinfer::grammar
