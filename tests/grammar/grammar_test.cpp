// The grammar IR: lowering of expressions (repetition, alternation), the checks of build(), and
// the pushdown automaton on small hand grammars.
#include <gtest/gtest.h>

#include "actors/grammar/errors.h"
#include "actors/grammar/grammar.h"
#include "actors/grammar/grammar_source.h"
#include "tests/grammar/support.h"

namespace zinfer::grammar {
namespace {

using testing::compiled;
using testing::full_match;

TEST(GrammarBuilder, RepetitionCountsAreExact) {
  GrammarBuilder b;
  const uint32_t root = b.add("root", Expr::repeat(Expr::literal("ab"), 2, 4));
  auto g = compiled(std::move(b).build(root));
  EXPECT_FALSE(full_match(g, "ab"));
  EXPECT_TRUE(full_match(g, "abab"));
  EXPECT_TRUE(full_match(g, "ababab"));
  EXPECT_TRUE(full_match(g, "abababab"));
  EXPECT_FALSE(full_match(g, "ababababab"));
  EXPECT_FALSE(full_match(g, "aba"));
}

// Long repetitions are counted in the stack frame, not unrolled: every count is still exact.
TEST(GrammarBuilder, CountedRepetitionIsExact) {
  GrammarBuilder b;
  const uint32_t root = b.add("root", Expr::seq({Expr::repeat(Expr::alt({Expr::literal("ab"), Expr::byte('c')}), 5, 40),
                                                 Expr::repeat(Expr::byte('x'), 7, kUnbounded)}));
  const Grammar lowered = std::move(b).build(root);
  EXPECT_NE(to_string(lowered).find("{5,40}"), std::string::npos) << to_string(lowered);
  EXPECT_NE(to_string(lowered).find("{7,7}"), std::string::npos) << to_string(lowered);
  auto g = compiled(lowered);
  for (int items = 0; items <= 45; ++items) {
    for (int xs : {6, 7, 30}) {
      std::string s;
      for (int i = 0; i < items; ++i) s += (i % 3 == 0) ? "ab" : "c";
      s += std::string(static_cast<size_t>(xs), 'x');
      EXPECT_EQ(full_match(g, s), items >= 5 && items <= 40 && xs >= 7) << items << " items, " << xs << " x";
    }
  }
}

TEST(GrammarBuilder, StarPlusOptional) {
  GrammarBuilder b;
  const uint32_t root = b.add("root", Expr::seq({Expr::star(Expr::byte('a')), Expr::plus(Expr::byte('b')),
                                                 Expr::optional(Expr::byte('c'))}));
  auto g = compiled(std::move(b).build(root));
  for (const char* yes : {"b", "ab", "aaabbb", "bc", "aabbc"}) EXPECT_TRUE(full_match(g, yes)) << yes;
  for (const char* no : {"", "a", "c", "abcc", "ba", "abca"}) EXPECT_FALSE(full_match(g, no)) << no;
}

TEST(GrammarBuilder, RecursionAndTailCallsKeepStacksShallow) {
  // Balanced parentheses: real nesting needs the stack; a long flat run must not grow it.
  GrammarBuilder b;
  const uint32_t root = b.declare("root");
  b.define(root, Expr::star(Expr::seq({Expr::byte('('), Expr::ref(root), Expr::byte(')')})));
  auto g = compiled(std::move(b).build(root));
  EXPECT_TRUE(full_match(g, "(()())((()))"));
  EXPECT_FALSE(full_match(g, "(()"));
  EXPECT_FALSE(full_match(g, "())"));
  std::string flat;
  for (int i = 0; i < 20000; ++i) flat += "()";
  EXPECT_TRUE(full_match(g, flat));
  std::string deep = std::string(500, '(') + std::string(500, ')');
  EXPECT_TRUE(full_match(g, deep));
}

TEST(GrammarBuilder, UndefinedRuleIsAnError) {
  GrammarBuilder b;
  const uint32_t root = b.declare("root");
  const uint32_t other = b.declare("other");
  b.define(root, Expr::ref(other));
  try {
    std::move(b).build(root);
    FAIL() << "no error";
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.construct(), "other");
  }
}

TEST(GrammarBuilder, LeftRecursionIsAnError) {
  GrammarBuilder b;
  const uint32_t root = b.declare("root");
  const uint32_t nullable = b.add("maybe", Expr::optional(Expr::byte('x')));
  b.define(root, Expr::alt({Expr::seq({Expr::ref(nullable), Expr::ref(root), Expr::byte('a')}), Expr::byte('b')}));
  try {
    std::move(b).build(root);
    FAIL() << "no error";
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.construct(), "root");
    EXPECT_NE(std::string(e.what()).find("left-recursive"), std::string::npos);
  }
}

TEST(GrammarBuilder, MaximumBelowMinimumIsAnError) {
  GrammarBuilder b;
  const uint32_t root = b.add("root", Expr::repeat(Expr::byte('a'), 3, 2));
  EXPECT_THROW(std::move(b).build(root), GrammarError);
}

TEST(GrammarBuilder, DumpNamesRules) {
  GrammarBuilder b;
  const uint32_t root = b.add("root", Expr::seq({Expr::literal("a"), Expr::byte_range('0', '9')}));
  const std::string text = to_string(std::move(b).build(root));
  EXPECT_NE(text.find("root#0 ::= \"a\" [\\x30-\\x39]"), std::string::npos) << text;
}

TEST(Choice, ExactlyTheChoices) {
  auto g = compiled(choice_grammar({"yes", "no", "maybe so", "no way"}));
  for (const char* yes : {"yes", "no", "maybe so", "no way"}) EXPECT_TRUE(full_match(g, yes)) << yes;
  for (const char* no : {"", "y", "yess", "maybe", "no wa", "No"}) EXPECT_FALSE(full_match(g, no)) << no;
  EXPECT_THROW(choice_grammar({}), GrammarError);
}

TEST(GrammarCache, SameSourceCompilesOnce) {
  GrammarCache cache(testing::byte_vocabulary(), 2);
  GrammarSource a{GrammarSource::Kind::kRegex, "a+", {}};
  GrammarSource b{GrammarSource::Kind::kChoice, "", {"x", "y"}};
  GrammarSource c{GrammarSource::Kind::kChoice, "", {std::string("x\0y", 3)}};
  auto first = cache.get(a);
  EXPECT_EQ(cache.get(a), first);
  EXPECT_NE(cache.get(b), first);
  EXPECT_NE(b.key(), c.key());
  cache.get(c);  // evicts a (capacity 2, least recently used)
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.get(a), first);
  GrammarSource bad{GrammarSource::Kind::kRegex, "(a", {}};
  EXPECT_THROW(cache.get(bad), GrammarError);
}

}  // namespace
}  // namespace zinfer::grammar
