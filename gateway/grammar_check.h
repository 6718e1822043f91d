// The gateway's check that a request's structured output compiles, before anything is queued: a
// schema that is not a schema, a keyword the grammar engine does not compile, a regex or GBNF
// grammar that does not parse are a 400 naming the request field and the construct, never an
// error from the executor halfway through a batch. The executor compiles the same source again
// against its vocabulary (actors/grammar GrammarCache); what is checked here is the part of the
// compile that can fail on user input (the grammar), which needs no vocabulary.
//
// Outcomes are kept in a small LRU keyed by the source, successes and failures alike, so that a
// client repeating one schema (or one bad schema) pays its compile once.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "protocol/messages.h"

namespace zinfer::gateway {

class GrammarCheck {
 public:
  explicit GrammarCheck(size_t capacity = 512);

  // Throws ApiError 400 with `field` as its param when the source does not compile; the message
  // names the field and the engine's construct (a keyword, a regex construct, a rule).
  void check(const protocol::StructuredOutput& structured, const std::string& field);

  size_t size() const;
  size_t compiles() const;  // how many sources were compiled (cache misses)

 private:
  struct Outcome {
    bool ok = true;
    std::string construct;  // what the engine names (a keyword, "regex", a rule name)
    std::string message;
  };
  Outcome compile(const protocol::StructuredOutput& structured);

  size_t capacity_;
  mutable std::mutex mutex_;
  size_t compiles_ = 0;
  std::list<std::pair<std::string, Outcome>> lru_;  // front: newest
  std::unordered_map<std::string, decltype(lru_)::iterator> index_;
};

// The one check every entry point of this process shares (HTTP and the ZeroMQ endpoint).
GrammarCheck& shared_grammar_check();

}  // namespace zinfer::gateway
