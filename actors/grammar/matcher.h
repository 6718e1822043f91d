// One sequence's position in a grammar: advance it with each sampled token, ask it for the next
// step's allowed-token bitmask. Copyable (a copy is an independent fork: n > 1, beam-like forks)
// and rewindable (rollback: preemption with recompute, speculative tokens). Not thread-safe; one
// matcher per sequence, any number per CompiledGrammar.
//
// Stop tokens (the vocabulary's stop ids: EOS, <|eot_id|>, ...) are allowed exactly when the
// output so far is a complete sentence of the grammar; every other special token never is.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "actors/grammar/compiled_grammar.h"
#include "actors/grammar/pushdown.h"

namespace zinfer::grammar {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Advances by one token; false (and no change) when the grammar does not allow it.
  bool accept_token(int32_t id);
  // Advances by raw bytes (a forced prefix, tests); false (and no change) when not allowed.
  bool accept_bytes(std::string_view bytes);
  // Writes the allowed tokens of the next step as a bitmask: bit (id % 32) of word id / 32.
  // `words` holds at least vocabulary().mask_words() words; all of them are written.
  void fill_mask(std::span<uint32_t> words);
  // The bytes that can come next (random walks, tests, jump-forward decoding).
  ByteSet allowed_bytes() const;
  bool is_accepting() const;   // stop tokens allowed now
  bool is_terminated() const;  // a stop token was accepted; nothing is allowed any more
  // Undoes the last `tokens` accepted tokens (accept_bytes calls count as one each).
  void rollback(size_t tokens);
  size_t history_size() const { return history_.size() - 1; }
  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  struct State {
    StackSet set;
    bool terminated = false;
  };
  bool advance(std::string_view bytes, StackSet& out);
  std::string state_key() const;

  std::shared_ptr<const CompiledGrammar> grammar_;
  StackArena arena_;
  std::vector<State> history_;  // back() is the current state
};

}  // namespace zinfer::grammar
