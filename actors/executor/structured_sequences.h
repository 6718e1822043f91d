// The executor's side of structured output (docs/structured-output.md, architecture.md I37): one
// grammar matcher per sequence whose rules carry `structured`, from the SeqWork that brought them
// until the plan that lists the sequence as finished. The matcher advances with every token
// sampled for the sequence (the executor sees them all, in order, including those of a sequence
// preempted since: the scheduler keeps them too), so that the mask of its next sample is known
// before the step that samples it runs. Rules that arrive with output_ids (tokens generated
// before) are replayed into the new matcher.
//
// begin_after: until the sequence samples a token whose text is begin_after, it is not masked;
// the grammar constrains the tokens after it. After the grammar's end (a stop token accepted),
// only the stop tokens are allowed (ignore_eos, or tokens in flight that the scheduler drops).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/grammar/grammar_source.h"
#include "actors/grammar/matcher.h"
#include "actors/grammar/vocabulary.h"
#include "protocol/messages.h"

namespace zinfer::actors {

class StructuredSequences {
 public:
  // `vocabulary`: the model's tokenizer as the grammar reads it, masks as wide as the logits;
  // null when the model has no tokenizer (every structured request then fails, saying so).
  explicit StructuredSequences(std::shared_ptr<const grammar::Vocabulary> vocabulary, size_t cache_capacity = 32);

  // The sequence's rules brought `structured`: compiles it (through the cache) and replays
  // `outputs`, replacing any matcher the sequence had. Throws grammar::GrammarError with the
  // message for the request (the source does not compile, begin_after is no token, the outputs
  // leave the grammar); the sequence then has no matcher.
  void start(uint64_t seq_id, const protocol::StructuredOutput& structured, std::span<const int32_t> outputs);
  // The sequence's matcher when its next sample is masked (it has one, past begin_after, and no
  // token has left it); null otherwise.
  grammar::Matcher* masked(uint64_t seq_id);
  // A token sampled for the sequence; false when it leaves the grammar (possible only when the
  // mask and the other sampling rules left no token, and the sampler fell back to the raw
  // logits): the sequence is then unmasked for good and the caller fails its request.
  bool advance(uint64_t seq_id, int32_t token);
  void finish(uint64_t seq_id) { entries_.erase(seq_id); }
  bool contains(uint64_t seq_id) const { return entries_.count(seq_id) != 0; }
  size_t size() const { return entries_.size(); }
  size_t mask_words() const;
  const grammar::Vocabulary* vocabulary() const { return vocabulary_.get(); }

  // Writes one row's mask (mask_words() words): the matcher's, or the stop tokens alone once the
  // grammar has ended. Safe on several threads for different matchers.
  void fill_mask(grammar::Matcher& matcher, std::span<uint32_t> words) const;

 private:
  struct Entry {
    explicit Entry(std::shared_ptr<const grammar::CompiledGrammar> g) : matcher(std::move(g)) {}
    grammar::Matcher matcher;
    std::vector<int32_t> begin_ids;  // the tokens whose text is begin_after; empty: started
    bool started = true;
    bool failed = false;
  };
  static bool step(Entry& e, int32_t token);

  std::shared_ptr<const grammar::Vocabulary> vocabulary_;
  std::unique_ptr<grammar::GrammarCache> cache_;
  std::unordered_map<uint64_t, std::unique_ptr<Entry>> entries_;
};

}  // namespace zinfer::actors
