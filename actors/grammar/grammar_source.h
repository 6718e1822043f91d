// What a request asks its output to follow, and the compiled grammars shared across requests.
// The API layer maps response_format / structured_outputs / guided_* onto a GrammarSource;
// compile() turns it into a Grammar (GrammarError / UnsupportedError name what is wrong), and
// GrammarCache keeps the CompiledGrammar of recent sources so repeated schemas compile once and
// share their token tables.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/grammar/compiled_grammar.h"
#include "actors/grammar/grammar.h"

namespace zinfer::grammar {

struct GrammarSource {
  enum class Kind { kJsonSchema, kJsonObject, kRegex, kChoice, kGbnf };
  Kind kind = Kind::kJsonObject;
  std::string text;                  // the schema (JSON text), the regex or the GBNF grammar
  std::vector<std::string> choices;  // kChoice: the output is exactly one of them

  std::string key() const;  // equal keys compile to equal grammars
};

Grammar compile(const GrammarSource& source);
// A grammar whose sentences are exactly the given strings (guided_choice).
Grammar choice_grammar(const std::vector<std::string>& choices);

class GrammarCache {
 public:
  GrammarCache(std::shared_ptr<const Vocabulary> vocabulary, size_t capacity);
  // Compiles on a miss (outside the lock: two threads may compile the same source once each).
  std::shared_ptr<const CompiledGrammar> get(const GrammarSource& source);
  size_t size() const;

 private:
  std::shared_ptr<const Vocabulary> vocabulary_;
  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const CompiledGrammar>>> lru_;  // front: newest
  std::unordered_map<std::string, decltype(lru_)::iterator> index_;
};

}  // namespace zinfer::grammar
