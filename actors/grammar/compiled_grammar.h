// A Grammar bound to a Vocabulary, with the tables the mask computation shares across all the
// matchers of that grammar (thread-safe; compute once per process and share).
//
// Per stack context (the positions of a stack's top frames, at most kContextFrames of them;
// computed lazily, the first time a state has such a stack), the vocabulary splits three ways by
// walking the token trie from that context alone:
//   accepted:  some reading consumes the whole token inside the context's frames; such a token
//              is allowed whatever lies deeper in the stack;
//   uncertain: every reading that survives pops out of the context before the token ends, so the
//              answer depends on the deeper stack (checked per state by Matcher);
//   rejected:  everything else.
// A context of several frames (not just the top position) keeps the uncertain sets small: with
// the top position alone, a token such as ` "a",` after a ':' would leave the whitespace rule
// after one byte and be checked per state; with four frames it is decided in the table. The count
// of a counted repetition is part of its frame, but counts farther than kExactCounts from the
// bounds share one table (tokens shorter than the distance cannot tell them apart; the few longer
// ones are checked per state), so x{0,1000} builds a few dozen tables, not a thousand. Masks of
// whole states are cached too, keyed by the full stacks.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/grammar/grammar.h"
#include "actors/grammar/pushdown.h"
#include "actors/grammar/vocabulary.h"

namespace zinfer::grammar {

struct PositionTokens {
  std::vector<uint32_t> accepted_words;  // a full bitmask when many tokens are accepted,
  std::vector<int32_t> accepted_ids;     // else the ids
  std::vector<int32_t> uncertain;        // ids in trie order
};

class CompiledGrammar {
 public:
  // mask_cache_entries: whole-state masks kept (0: none; each is vocabulary().mask_words() words).
  CompiledGrammar(Grammar grammar, std::shared_ptr<const Vocabulary> vocabulary, size_t mask_cache_entries = 256);
  CompiledGrammar(const CompiledGrammar&) = delete;
  CompiledGrammar& operator=(const CompiledGrammar&) = delete;

  const Grammar& grammar() const { return grammar_; }
  const Pushdown& pushdown() const { return pushdown_; }
  const Vocabulary& vocabulary() const { return *vocabulary_; }
  static constexpr int kContextFrames = 4;
  // Counts this close to a repetition's bound get tables of their own; farther ones share one.
  static constexpr uint32_t kExactCounts = 32;
  // The tables for the context of `node` (a non-bottom node of `arena`). When a repetition's
  // count was taken as far from its bounds, `length_limit` is the distance: the tables hold for
  // tokens shorter than it, and longer ones must be checked at the stack (long_tokens()).
  // Otherwise it is UINT32_MAX.
  const PositionTokens& tokens_for(const StackArena& arena, uint32_t node, uint32_t& length_limit) const;
  // The usable tokens of at least kExactCounts bytes, in trie order.
  const std::vector<int32_t>& long_tokens() const { return long_tokens_; }
  size_t contexts() const;  // how many tables were built

  // The state-level mask cache (bounded; cleared when full).
  bool cached_mask(const std::string& key, std::vector<uint32_t>& mask) const;
  void cache_mask(const std::string& key, const std::vector<uint32_t>& mask) const;

 private:
  struct Context {
    std::once_flag once;
    PositionTokens tokens;
  };
  // frames: (position, count) pairs from the top down.
  PositionTokens compute(const std::vector<uint32_t>& frames) const;
  uint32_t canonical_count(uint32_t pos, uint32_t count, uint32_t& length_limit) const;

  Grammar grammar_;
  Pushdown pushdown_;
  std::shared_ptr<const Vocabulary> vocabulary_;
  std::vector<int32_t> long_tokens_;
  mutable std::mutex context_mutex_;
  mutable std::unordered_map<std::string, std::unique_ptr<Context>> contexts_;
  size_t mask_cache_entries_;
  mutable std::mutex mask_mutex_;
  mutable std::unordered_map<std::string, std::vector<uint32_t>> masks_;
};

}  // namespace zinfer::grammar
