#include "actors/executor/grammar_step.h"

#include <chrono>
#include <exception>
#include <string>

namespace zinfer::actors {

GrammarStep::GrammarStep(std::shared_ptr<const grammar::Vocabulary> vocabulary, int mask_threads)
    : sequences_(std::move(vocabulary)), workers_(mask_threads) {}

void GrammarStep::take_rules(const protocol::StepPlan& plan, std::vector<protocol::SeqError>& errors) {
  for (const protocol::SeqWork& w : plan.seqs) {
    if (!w.rules) continue;
    if (!w.rules->structured) {
      sequences_.finish(w.seq_id);  // new rules without a grammar replace any earlier ones
      continue;
    }
    try {
      sequences_.start(w.seq_id, *w.rules->structured, w.rules->output_ids);
    } catch (const std::exception& e) {
      errors.push_back(protocol::SeqError{w.seq_id, std::string("structured output: ") + e.what()});
    }
  }
}

gpu::TokenMasks* GrammarStep::prepare(gpu::BatchInput& batch) {
  for (uint64_t id : batch.finished) sequences_.finish(id);
  rows_.clear();
  if (sequences_.size() == 0) return nullptr;
  for (gpu::SequenceInput& s : batch.seqs) {
    if (!s.sample) continue;
    grammar::Matcher* m = sequences_.masked(s.seq_id);
    s.sampling.token_mask = m != nullptr;
    if (m != nullptr) rows_.push_back(m);
  }
  if (rows_.empty()) return nullptr;
  masks_.reset(rows_.size(), sequences_.mask_words(),
               [this](uint32_t* words, size_t rows, size_t row_words) { fill(words, rows, row_words); });
  return &masks_;
}

void GrammarStep::fill(uint32_t* words, size_t rows, size_t row_words) {
  const auto t0 = std::chrono::steady_clock::now();
  // One row is tens of microseconds warm (docs/structured-output.md): a row per job.
  workers_.run(rows, [&](size_t r) {
    sequences_.fill_mask(*rows_[r], std::span<uint32_t>(words + r * row_words, row_words));
  });
  last_fill_us_ =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
}

void GrammarStep::advance(const std::vector<gpu::SampledToken>& sampled, std::vector<protocol::SeqError>& errors) {
  if (sequences_.size() == 0) return;
  for (const gpu::SampledToken& t : sampled) {
    if (sequences_.advance(t.seq_id, t.token)) continue;
    errors.push_back(protocol::SeqError{
        t.seq_id, "structured output: token " + std::to_string(t.token) +
                      " leaves the grammar (the grammar and the other sampling rules left no token in common)"});
  }
}

}  // namespace zinfer::actors
