#include "gateway/grammar_check.h"

#include "actors/grammar/errors.h"
#include "actors/grammar/grammar_source.h"
#include "actors/grammar/structured_source.h"
#include "gateway/api_error.h"

namespace zinfer::gateway {

GrammarCheck::GrammarCheck(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

GrammarCheck::Outcome GrammarCheck::compile(const protocol::StructuredOutput& structured) {
  Outcome o;
  try {
    (void)grammar::compile(grammar::source_of(structured));
  } catch (const grammar::GrammarError& e) {
    o.ok = false;
    o.construct = e.construct();
    o.message = e.what();
  } catch (const std::exception& e) {
    // Anything else the front ends let through (a JSON value of an unexpected type deep in a
    // schema) is still the input's fault.
    o.ok = false;
    o.message = e.what();
  }
  return o;
}

void GrammarCheck::check(const protocol::StructuredOutput& structured, const std::string& field) {
  // The kind is part of the key, so an unknown kind cannot hit the entry of a known one.
  std::string key = std::to_string(static_cast<int>(structured.kind)) + ":" + structured.text;
  for (const std::string& c : structured.choices) key += '\0' + std::to_string(c.size()) + ":" + c;

  Outcome outcome;
  bool cached = false;
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      outcome = it->second->second;
      cached = true;
    }
  }
  if (!cached) {
    outcome = compile(structured);  // outside the lock: a large schema must not stall other requests
    std::lock_guard lock(mutex_);
    ++compiles_;
    if (!index_.count(key)) {
      lru_.emplace_front(key, outcome);
      index_[key] = lru_.begin();
      if (lru_.size() > capacity_) {
        index_.erase(lru_.back().first);
        lru_.pop_back();
      }
    }
  }
  if (outcome.ok) return;
  std::string message = "'" + field + "' does not compile: " + outcome.message;
  if (!outcome.construct.empty()) message += " [construct: " + outcome.construct + "]";
  throw invalid_param(field, message);
}

size_t GrammarCheck::size() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

size_t GrammarCheck::compiles() const {
  std::lock_guard lock(mutex_);
  return compiles_;
}

GrammarCheck& shared_grammar_check() {
  static GrammarCheck check;
  return check;
}

}  // namespace zinfer::gateway
