// Invariant 37 (docs/architecture.md): the executor's grammar state. A matcher per constrained
// sequence advances with each sampled token, masks only after begin_after, is rebuilt from
// output_ids when rules come again (recompute), goes when the plan lists the sequence finished;
// a source that does not compile or a token that leaves the grammar fails that sequence alone.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/executor/grammar_step.h"
#include "actors/executor/structured_sequences.h"
#include "actors/grammar/errors.h"

namespace zinfer::actors {
namespace {

constexpr int32_t kEos = 6;
constexpr int32_t kThink = 5;
constexpr int32_t kMaskSize = 40;  // the logits are wider than the tokenizer's 8 ids

std::shared_ptr<const grammar::Vocabulary> toy_vocabulary() {
  std::vector<std::string> bytes = {"a", "b", "ab", "{", "}", "</think>", "<eos>", "c"};
  std::vector<char> excluded = {0, 0, 0, 0, 0, 1, 1, 0};
  return std::make_shared<const grammar::Vocabulary>(bytes, excluded, std::vector<int32_t>{kEos}, kMaskSize);
}

protocol::StructuredOutput regex(const std::string& text, const std::string& begin_after = "") {
  protocol::StructuredOutput s;
  s.kind = protocol::StructuredKind::kRegex;
  s.text = text;
  s.begin_after = begin_after;
  return s;
}

std::set<int32_t> allowed(StructuredSequences& seqs, uint64_t id) {
  grammar::Matcher* m = seqs.masked(id);
  EXPECT_NE(m, nullptr);
  if (m == nullptr) return {};
  std::vector<uint32_t> words(seqs.mask_words(), 0xffffffffu);
  seqs.fill_mask(*m, words);
  std::set<int32_t> out;
  for (int32_t id2 = 0; id2 < static_cast<int32_t>(words.size() * 32); ++id2)
    if ((words[id2 / 32] >> (id2 % 32)) & 1u) out.insert(id2);
  return out;
}

TEST(StructuredSequences, AdvancesWithEachTokenAndAllowsEosOnlyWhenComplete) {
  StructuredSequences seqs(toy_vocabulary());
  EXPECT_EQ(seqs.mask_words(), 2u);  // 40 ids
  seqs.start(1, regex("ab+"), {});
  EXPECT_EQ(allowed(seqs, 1), (std::set<int32_t>{0, 2}));
  EXPECT_TRUE(seqs.advance(1, 0));
  EXPECT_EQ(allowed(seqs, 1), (std::set<int32_t>{1}));
  EXPECT_TRUE(seqs.advance(1, 1));
  EXPECT_EQ(allowed(seqs, 1), (std::set<int32_t>{1, kEos}));
  EXPECT_TRUE(seqs.advance(1, kEos));
  // After the end only the stop token (a token in flight, or ignore_eos).
  EXPECT_EQ(allowed(seqs, 1), (std::set<int32_t>{kEos}));
  EXPECT_TRUE(seqs.advance(1, kEos));
  EXPECT_EQ(seqs.masked(2), nullptr);    // no grammar: no mask,
  EXPECT_TRUE(seqs.advance(2, 3));       // and any token
}

TEST(StructuredSequences, BeginAfterLeavesTokensFreeUntilItsToken) {
  StructuredSequences seqs(toy_vocabulary());
  seqs.start(1, regex("c", "</think>"), {});
  EXPECT_EQ(seqs.masked(1), nullptr);
  EXPECT_TRUE(seqs.advance(1, 4));  // reasoning: anything
  EXPECT_TRUE(seqs.advance(1, 0));
  EXPECT_EQ(seqs.masked(1), nullptr);
  EXPECT_TRUE(seqs.advance(1, kThink));
  EXPECT_EQ(allowed(seqs, 1), (std::set<int32_t>{7}));
  EXPECT_THROW(seqs.start(2, regex("c", "</nothing>"), {}), grammar::GrammarError);
  EXPECT_FALSE(seqs.contains(2));
}

TEST(StructuredSequences, RulesAgainReplayTheOutputs) {
  // After a recompute the scheduler may send the rules again with the tokens generated so far:
  // the new matcher is where the old one was.
  StructuredSequences seqs(toy_vocabulary());
  seqs.start(1, regex("ab+"), {});
  EXPECT_TRUE(seqs.advance(1, 0));
  seqs.start(1, regex("ab+"), std::vector<int32_t>{0, 1, 1});
  EXPECT_EQ(allowed(seqs, 1), (std::set<int32_t>{1, kEos}));
  seqs.start(3, regex("c", "</think>"), std::vector<int32_t>{0, kThink});
  EXPECT_EQ(allowed(seqs, 3), (std::set<int32_t>{7}));
  seqs.start(4, regex("c", "</think>"), std::vector<int32_t>{0, 1});
  EXPECT_EQ(seqs.masked(4), nullptr);  // still reasoning
  EXPECT_THROW(seqs.start(5, regex("ab+"), std::vector<int32_t>{1}), grammar::GrammarError);
  EXPECT_FALSE(seqs.contains(5));
}

TEST(StructuredSequences, ATokenOutsideTheGrammarUnmasksTheSequenceForGood) {
  StructuredSequences seqs(toy_vocabulary());
  seqs.start(1, regex("ab+"), {});
  EXPECT_FALSE(seqs.advance(1, 7));
  EXPECT_EQ(seqs.masked(1), nullptr);
  EXPECT_TRUE(seqs.advance(1, 7));  // reported once
}

TEST(StructuredSequences, WithoutAVocabularyEveryRequestFailsSaying) {
  StructuredSequences seqs(nullptr);
  try {
    seqs.start(1, regex("a"), {});
    FAIL();
  } catch (const grammar::GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos);
  }
}

protocol::SeqWork work(uint64_t id, std::optional<protocol::StructuredOutput> structured) {
  protocol::SeqWork w;
  w.seq_id = id;
  w.sample = true;
  if (structured) {
    w.rules.emplace();
    w.rules->structured = std::move(structured);
  }
  return w;
}

gpu::BatchInput batch_of(const std::vector<uint64_t>& ids, const std::vector<uint64_t>& finished = {}) {
  gpu::BatchInput b;
  for (uint64_t id : ids) {
    gpu::SequenceInput s;
    s.seq_id = id;
    s.sample = true;
    b.seqs.push_back(s);
  }
  b.finished = finished;
  return b;
}

TEST(GrammarStep, MasksTheConstrainedRowsInOrderAndFailsABadSourceAlone) {
  GrammarStep step(toy_vocabulary(), 2);
  protocol::StepPlan plan;
  protocol::StructuredOutput choice;
  choice.kind = protocol::StructuredKind::kChoice;
  choice.choices = {"c", "ab"};
  plan.seqs = {work(1, regex("ab+")), work(2, std::nullopt), work(3, choice), work(4, regex("(unclosed"))};
  std::vector<protocol::SeqError> errors;
  step.take_rules(plan, errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].seq_id, 4u);
  EXPECT_NE(errors[0].message.find("structured output"), std::string::npos);

  gpu::BatchInput b = batch_of({1, 2, 3, 4});
  gpu::TokenMasks* masks = step.prepare(b);
  ASSERT_NE(masks, nullptr);
  EXPECT_TRUE(b.seqs[0].sampling.token_mask);
  EXPECT_FALSE(b.seqs[1].sampling.token_mask);
  EXPECT_TRUE(b.seqs[2].sampling.token_mask);
  EXPECT_FALSE(b.seqs[3].sampling.token_mask);  // its request fails; the step goes on
  ASSERT_EQ(masks->num_rows(), 2u);
  ASSERT_EQ(masks->row_words(), 2u);
  const uint32_t* rows = masks->rows();
  EXPECT_EQ(rows[0], (1u << 0) | (1u << 2));  // "a", "ab"
  EXPECT_EQ(rows[1], 0u);
  EXPECT_EQ(rows[2], (1u << 0) | (1u << 2) | (1u << 7));  // "c", "a", "ab"
  EXPECT_EQ(rows[3], 0u);  // ids beyond the tokenizer never

  // The tokens come back: row 3 took "c" and is complete, row 1 left its grammar.
  std::vector<gpu::SampledToken> sampled = {{1, 7, 0.f, {}}, {2, 1, 0.f, {}}, {3, 7, 0.f, {}}, {4, 0, 0.f, {}}};
  errors.clear();
  step.advance(sampled, errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].seq_id, 1u);

  // Finished sequences drop their matchers; a step without constrained rows gets no masks.
  gpu::BatchInput next = batch_of({2, 3}, {1, 3, 4});
  EXPECT_EQ(step.prepare(next), nullptr);
  EXPECT_EQ(step.sequences().size(), 0u);
  EXPECT_FALSE(next.seqs[1].sampling.token_mask);
}

TEST(GrammarStep, ManyRowsAreFilledAlikeOnSeveralThreads) {
  GrammarStep step(toy_vocabulary(), 3);
  protocol::StepPlan plan;
  std::vector<uint64_t> ids;
  for (uint64_t id = 1; id <= 64; ++id) {
    plan.seqs.push_back(work(id, regex(id % 2 ? "ab+" : "c")));
    ids.push_back(id);
  }
  std::vector<protocol::SeqError> errors;
  step.take_rules(plan, errors);
  ASSERT_TRUE(errors.empty());
  gpu::BatchInput b = batch_of(ids);
  gpu::TokenMasks* masks = step.prepare(b);
  ASSERT_NE(masks, nullptr);
  const uint32_t* rows = masks->rows();
  for (size_t r = 0; r < 64; ++r) {
    EXPECT_EQ(rows[2 * r], (r % 2 == 0) ? ((1u << 0) | (1u << 2)) : (1u << 7)) << r;
    EXPECT_EQ(rows[2 * r + 1], 0u);
  }
}

}  // namespace
}  // namespace zinfer::actors
