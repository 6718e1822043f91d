#include "actors/executor/structured_sequences.h"

#include <algorithm>
#include <utility>

#include "actors/grammar/errors.h"
#include "actors/grammar/structured_source.h"

namespace zinfer::actors {

StructuredSequences::StructuredSequences(std::shared_ptr<const grammar::Vocabulary> vocabulary, size_t cache_capacity)
    : vocabulary_(std::move(vocabulary)) {
  if (vocabulary_) cache_ = std::make_unique<grammar::GrammarCache>(vocabulary_, cache_capacity);
}

size_t StructuredSequences::mask_words() const { return vocabulary_ ? vocabulary_->mask_words() : 0; }

bool StructuredSequences::step(Entry& e, int32_t token) {
  if (e.failed) return true;
  if (!e.started) {
    e.started = std::find(e.begin_ids.begin(), e.begin_ids.end(), token) != e.begin_ids.end();
    return true;
  }
  // After the grammar's end, the stop tokens (masked so) change nothing.
  if (e.matcher.is_terminated()) return true;
  if (e.matcher.accept_token(token)) return true;
  e.failed = true;
  return false;
}

void StructuredSequences::start(uint64_t seq_id, const protocol::StructuredOutput& structured,
                                std::span<const int32_t> outputs) {
  entries_.erase(seq_id);
  if (!vocabulary_) {
    throw grammar::GrammarError("structured", "structured output needs the model's tokenizer.json, which the executor "
                                              "did not find");
  }
  auto entry = std::make_unique<Entry>(cache_->get(grammar::source_of(structured)));
  if (!structured.begin_after.empty()) {
    entry->started = false;
    const grammar::Vocabulary& v = *vocabulary_;
    for (int32_t id = 0; id < v.num_tokens(); ++id)
      if (v.bytes(id) == structured.begin_after) entry->begin_ids.push_back(id);
    if (entry->begin_ids.empty()) {
      throw grammar::GrammarError("begin_after", "begin_after \"" + structured.begin_after +
                                                     "\" is not the text of a token of the model's vocabulary");
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!step(*entry, outputs[i])) {
      throw grammar::GrammarError("output", "the " + std::to_string(i) + "-th token generated before (" +
                                                std::to_string(outputs[i]) + ") leaves the grammar");
    }
  }
  entries_.emplace(seq_id, std::move(entry));
}

grammar::Matcher* StructuredSequences::masked(uint64_t seq_id) {
  auto it = entries_.find(seq_id);
  if (it == entries_.end()) return nullptr;
  Entry& e = *it->second;
  return e.started && !e.failed ? &e.matcher : nullptr;
}

bool StructuredSequences::advance(uint64_t seq_id, int32_t token) {
  auto it = entries_.find(seq_id);
  return it == entries_.end() || step(*it->second, token);
}

void StructuredSequences::fill_mask(grammar::Matcher& matcher, std::span<uint32_t> words) const {
  matcher.fill_mask(words);  // all zero once terminated
  if (!matcher.is_terminated()) return;
  for (int32_t id : vocabulary_->stop_ids())
    if (id >= 0 && static_cast<size_t>(id) < words.size() * 32) words[id >> 5] |= 1u << (id & 31);
}

}  // namespace zinfer::actors
