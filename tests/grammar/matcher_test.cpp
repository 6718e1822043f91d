// The matcher on real vocabularies: every mask equals the brute-force check of every token id
// (the fast path: context-independent tables, uncertain-token checks, mask cache), stop tokens
// only in accepting states, special tokens never, rollback, forks, termination.
#include <random>

#include <gtest/gtest.h>

#include "actors/grammar/gbnf.h"
#include "actors/grammar/grammar_source.h"
#include "actors/grammar/json_schema.h"
#include "actors/grammar/matcher.h"
#include "actors/grammar/regex.h"
#include "tests/grammar/support.h"

namespace zinfer::grammar {
namespace {

std::vector<uint32_t> mask_of(Matcher& m) {
  std::vector<uint32_t> words(m.grammar().vocabulary().mask_words());
  m.fill_mask(words);
  return words;
}

bool bit(const std::vector<uint32_t>& mask, int32_t id) { return (mask[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1; }

std::vector<uint32_t> brute_force_mask(Matcher& m) {
  const Vocabulary& vocab = m.grammar().vocabulary();
  std::vector<uint32_t> words(vocab.mask_words(), 0);
  for (int32_t id = 0; id < vocab.mask_size(); ++id)
    if (m.accept_token(id)) {
      words[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
      m.rollback(1);
    }
  return words;
}

Grammar grammar_named(const std::string& which) {
  if (which == "json_object") return json_object_grammar();
  if (which == "schema")
    return json_schema_grammar_from_text(R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},
        "kind":{"enum":["cat","dog"]},"age":{"type":"integer","minimum":0,"maximum":30},
        "tags":{"type":"array","items":{"type":"string"},"maxItems":2}},"required":["name","kind"]})");
  if (which == "regex") return regex_grammar("[a-z]{1,8}@[a-z]+\\.(com|org)");
  if (which == "choice") return choice_grammar({"positive", "negative", "neutral"});
  return gbnf_grammar("root ::= expr\nexpr ::= term ((\" + \" | \"-\") term)*\nterm ::= [0-9]+ | \"(\" expr \")\"");
}

TEST(Matcher, MaskEqualsBruteForceOnRealVocabularies) {
  for (const std::string& vocab_name : testing::kVocabularies) {
    auto vocab = testing::vocabulary(vocab_name);
    ASSERT_TRUE(vocab);
    for (const char* which : {"json_object", "schema", "regex", "choice", "gbnf"}) {
      SCOPED_TRACE(vocab_name + " " + which);
      auto g = testing::compiled(grammar_named(which), vocab);
      std::mt19937 rng(42);
      Matcher m(g);
      for (int step = 0; step < 14 && !m.is_terminated(); ++step) {
        const std::vector<uint32_t> mask = mask_of(m);
        ASSERT_EQ(mask, brute_force_mask(m)) << "step " << step;
        // Walk on: a random allowed ordinary token; a stop token once accepting, now and then.
        std::vector<int32_t> allowed;
        for (int32_t id = 0; id < vocab->mask_size(); ++id)
          if (bit(mask, id) && !vocab->is_stop(id)) allowed.push_back(id);
        if (allowed.empty() || (m.is_accepting() && rng() % 4 == 0)) {
          ASSERT_TRUE(m.is_accepting());
          ASSERT_TRUE(m.accept_token(vocab->stop_ids()[0]));
          break;
        }
        // Prefer longer tokens so the walk gets somewhere in 14 steps.
        int32_t pick = allowed[rng() % allowed.size()];
        for (int k = 0; k < 3; ++k) {
          const int32_t other = allowed[rng() % allowed.size()];
          if (vocab->bytes(other).size() > vocab->bytes(pick).size()) pick = other;
        }
        ASSERT_TRUE(m.accept_token(pick));
      }
    }
  }
}

TEST(Matcher, StopTokensOnlyWhenAcceptingAndSpecialTokensNever) {
  auto vocab = testing::vocabulary("llama3");
  ASSERT_TRUE(vocab);
  auto g = testing::compiled(choice_grammar({"yes", "yes sir"}), vocab);
  Matcher m(g);
  const int32_t eot = vocab->stop_ids()[1];
  EXPECT_FALSE(bit(mask_of(m), eot));
  EXPECT_FALSE(m.accept_token(eot));
  ASSERT_TRUE(m.accept_bytes("yes"));
  EXPECT_TRUE(m.is_accepting());
  const auto mask = mask_of(m);
  EXPECT_TRUE(bit(mask, eot));
  EXPECT_TRUE(bit(mask, vocab->stop_ids()[0]));
  for (int32_t id = 128000; id < vocab->mask_size(); ++id)
    if (!vocab->is_stop(id)) EXPECT_FALSE(bit(mask, id)) << id;  // <|begin_of_text|>, reserved ones
  EXPECT_TRUE(m.accept_token(eot));
  EXPECT_TRUE(m.is_terminated());
  EXPECT_FALSE(m.is_accepting());
  const auto after = mask_of(m);
  EXPECT_EQ(std::count(after.begin(), after.end(), 0u), static_cast<long>(after.size()));
  EXPECT_FALSE(m.accept_token(eot));
  m.rollback(1);
  EXPECT_FALSE(m.is_terminated());
  EXPECT_TRUE(m.is_accepting());
}

TEST(Matcher, RejectedTokenLeavesTheStateAlone) {
  auto vocab = testing::vocabulary("qwen3");
  ASSERT_TRUE(vocab);
  auto g = testing::compiled(json_object_grammar(), vocab);
  Matcher m(g);
  const auto before = mask_of(m);
  const int32_t hello = 14990;  // some word token; '{' is required first
  ASSERT_FALSE(bit(before, hello));
  EXPECT_FALSE(m.accept_token(hello));
  EXPECT_EQ(m.history_size(), 0u);
  EXPECT_EQ(mask_of(m), before);
}

TEST(Matcher, RollbackAndForksAreIndependent) {
  auto vocab = testing::vocabulary("llama3");
  ASSERT_TRUE(vocab);
  auto g = testing::compiled(grammar_named("schema"), vocab);
  Matcher m(g);
  std::vector<std::vector<uint32_t>> masks{mask_of(m)};
  for (const char* piece : {"{\"", "name", "\":", " \"", "Rex", "\","}) {
    ASSERT_TRUE(m.accept_bytes(piece)) << piece;
    masks.push_back(mask_of(m));
  }
  Matcher fork = m;
  ASSERT_TRUE(fork.accept_bytes(" \"kind\": \"dog\"}"));
  EXPECT_TRUE(fork.is_accepting());
  EXPECT_FALSE(m.is_accepting());
  EXPECT_EQ(mask_of(m), masks.back());
  for (size_t back = 1; back < masks.size(); ++back) {
    m.rollback(1);
    EXPECT_EQ(mask_of(m), masks[masks.size() - 1 - back]) << back;
  }
  EXPECT_EQ(m.history_size(), 0u);
  m.rollback(5);  // past the start: stays at the start
  EXPECT_EQ(m.history_size(), 0u);
  EXPECT_TRUE(fork.is_accepting());
}

TEST(Matcher, CachedMasksMatchFreshOnes) {
  auto vocab = testing::vocabulary("llama3");
  ASSERT_TRUE(vocab);
  auto shared = testing::compiled(json_object_grammar(), vocab);
  auto fresh = testing::compiled(json_object_grammar(), vocab);
  Matcher a(shared), b(shared), c(fresh);
  for (Matcher* m : {&a, &b, &c}) ASSERT_TRUE(m->accept_bytes("{\"k\": [1, {\"x\": \"a"));
  const auto first = mask_of(a);   // computed
  const auto second = mask_of(b);  // from the cache of `shared`
  EXPECT_EQ(first, second);
  EXPECT_EQ(first, mask_of(c));
  EXPECT_EQ(first, brute_force_mask(c));
}

TEST(Matcher, LongBoundedStringsShareTables) {
  auto vocab = testing::vocabulary("llama3");
  ASSERT_TRUE(vocab);
  auto g = std::make_shared<const CompiledGrammar>(
      json_schema_grammar_from_text(R"({"type":"string","minLength":40,"maxLength":1000})"), vocab, 0);
  Matcher m(g);
  ASSERT_TRUE(m.accept_bytes("\""));
  std::mt19937 rng(3);
  size_t chars = 0;
  for (int step = 0; step < 400; ++step) {
    if (step < 12 || step % 50 == 0 || (chars > 30 && chars < 45) || chars > 985)
      ASSERT_EQ(mask_of(m), brute_force_mask(m)) << chars << " characters";
    const std::string piece = chars >= 1000 ? "\"" : std::string(1 + rng() % std::min<size_t>(6, 1000 - chars), 'a' + rng() % 26);
    ASSERT_TRUE(m.accept_bytes(piece)) << chars;
    if (piece == "\"") break;
    chars += piece.size();
  }
  EXPECT_TRUE(m.is_accepting());
  // Tables per count near the bounds (one per stack top a string character can start with), and
  // the far counts share theirs: the number does not grow with maxLength (unrolled: ~7000).
  EXPECT_LT(g->contexts(), 8 * (2 * CompiledGrammar::kExactCounts + 4));
}

TEST(Matcher, DeepStatesWithoutTheMaskCacheEqualBruteForce) {
  // Stacks deeper than the tables' context: the uncertain tokens decide at the real stack.
  auto vocab = testing::vocabulary("qwen3");
  ASSERT_TRUE(vocab);
  auto g = std::make_shared<const CompiledGrammar>(json_value_grammar(), vocab, 0);
  Matcher m(g);
  for (const char* piece : {"[[[[{\"a\": [1, {\"b\": \"x", "\"}", "]", "}", ", 2.5", "e", "1", "]"}) {
    ASSERT_TRUE(m.accept_bytes(piece)) << piece;
    EXPECT_EQ(mask_of(m), brute_force_mask(m)) << "after " << piece;
  }
  EXPECT_GT(g->contexts(), 5u);
}

}  // namespace
}  // namespace zinfer::grammar
