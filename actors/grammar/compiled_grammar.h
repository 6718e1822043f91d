// A Grammar bound to a Vocabulary, with the tables the mask computation shares across all the
// matchers of that grammar (thread-safe; compute once per process and share).
//
// Per byte-set position p (lazily, the first time a state has p on top of a stack), the vocabulary
// splits three ways by walking the token trie from the stack {p} alone:
//   accepted:  some reading consumes the whole token inside p's rule (and the rules it enters);
//              such a token is allowed whatever lies below p on the stack;
//   uncertain: every reading that survives leaves p's rule before the token ends, so the answer
//              depends on the stack below (checked per state by Matcher);
//   rejected:  everything else.
// Masks of whole states are cached too, keyed by the full stacks' positions.
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
  CompiledGrammar(Grammar grammar, std::shared_ptr<const Vocabulary> vocabulary);
  CompiledGrammar(const CompiledGrammar&) = delete;
  CompiledGrammar& operator=(const CompiledGrammar&) = delete;

  const Grammar& grammar() const { return grammar_; }
  const Pushdown& pushdown() const { return pushdown_; }
  const Vocabulary& vocabulary() const { return *vocabulary_; }
  const PositionTokens& tokens_at(uint32_t pos) const;

  // The state-level mask cache (bounded; cleared when full).
  bool cached_mask(const std::string& key, std::vector<uint32_t>& mask) const;
  void cache_mask(const std::string& key, const std::vector<uint32_t>& mask) const;

 private:
  PositionTokens compute(uint32_t pos) const;

  Grammar grammar_;
  Pushdown pushdown_;
  std::shared_ptr<const Vocabulary> vocabulary_;
  mutable std::vector<std::unique_ptr<PositionTokens>> positions_;
  mutable std::unique_ptr<std::once_flag[]> once_;
  mutable std::mutex mask_mutex_;
  mutable std::unordered_map<std::string, std::vector<uint32_t>> masks_;
};

}  // namespace zinfer::grammar
