#include "actors/grammar/grammar_source.h"

#include "actors/grammar/errors.h"
#include "actors/grammar/gbnf.h"
#include "actors/grammar/json_schema.h"
#include "actors/grammar/regex.h"

namespace zinfer::grammar {

std::string GrammarSource::key() const {
  std::string k(1, static_cast<char>('0' + static_cast<int>(kind)));
  k += text;
  for (const std::string& c : choices) {
    k += '\0';
    k += std::to_string(c.size()) + ":" + c;
  }
  return k;
}

Grammar choice_grammar(const std::vector<std::string>& choices) {
  if (choices.empty()) throw GrammarError("choice", "choice: the list is empty");
  std::vector<Expr> alts;
  for (const std::string& c : choices) alts.push_back(Expr::literal(c));
  GrammarBuilder b;
  const uint32_t root = b.add("root", Expr::alt(std::move(alts)));
  return std::move(b).build(root);
}

Grammar compile(const GrammarSource& source) {
  switch (source.kind) {
    case GrammarSource::Kind::kJsonSchema: return json_schema_grammar_from_text(source.text);
    case GrammarSource::Kind::kJsonObject: return json_object_grammar();
    case GrammarSource::Kind::kRegex: return regex_grammar(source.text);
    case GrammarSource::Kind::kChoice: return choice_grammar(source.choices);
    case GrammarSource::Kind::kGbnf: return gbnf_grammar(source.text);
  }
  throw GrammarError("kind", "unknown grammar kind");
}

GrammarCache::GrammarCache(std::shared_ptr<const Vocabulary> vocabulary, size_t capacity)
    : vocabulary_(std::move(vocabulary)), capacity_(std::max<size_t>(capacity, 1)) {}

std::shared_ptr<const CompiledGrammar> GrammarCache::get(const GrammarSource& source) {
  const std::string key = source.key();
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  auto compiled = std::make_shared<const CompiledGrammar>(compile(source), vocabulary_);
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) return it->second->second;
  lru_.emplace_front(key, compiled);
  index_[key] = lru_.begin();
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return compiled;
}

size_t GrammarCache::size() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

}  // namespace zinfer::grammar
