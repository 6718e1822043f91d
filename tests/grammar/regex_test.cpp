// Regular expressions against std::regex (ECMAScript, a matcher that is not ours) on random
// strings, random walks of the automaton, Unicode classes, and the errors of unsupported or
// malformed patterns.
#include <random>
#include <regex>

#include <gtest/gtest.h>

#include "actors/grammar/errors.h"
#include "actors/grammar/regex.h"
#include "tests/grammar/support.h"

namespace zinfer::grammar {
namespace {

using testing::compiled;
using testing::full_match;

const std::vector<std::string> kPatterns = {
    "a", "abc", "a|b|cd", "(ab)*c", "a?b+c*", "[a-c]{2,3}", "[^ab]x", "\\d{1,3}", "\\w+@\\w+",
    "(a|ab)(c|bcd)(d*)", "x{3}", "x{2,}", "[a-]z", "(?:ab|a)b?", "\\.\\*", "[\\d.]+", "\\s?a",
    "a{0,2}b{1}", "((a|b)c)+", "[^\\n]*", "\\x41\\u0042", ".{2}", "[^\\d\\s]b",
    "x*?y", "(a|)b", "\\D\\W", "z|", "(((a)))", "[.][*]", "a.c", "\\-\\]", "a{5,12}", "(ab|c){3,9}d",
    "[0-9]{6}", "(a|bc){2,}x{5,}", "[ab]{0,9}c?",
};
const std::string kAlphabet = "abcdxyz .*-@01597\n_AB]";
const std::string kFewLetters = "aabcx0";

TEST(Regex, AgreesWithStdRegexOnRandomStrings) {
  std::mt19937 rng(7);
  for (const std::string& pattern : kPatterns) {
    SCOPED_TRACE(pattern);
    const std::regex reference(pattern, std::regex::ECMAScript);
    auto g = compiled(regex_grammar(pattern));
    int matches = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string s;
      // Short strings over the whole alphabet, longer ones over a few letters (long counts).
      const bool long_one = i % 2 == 1;
      const std::string& letters = long_one ? kFewLetters : kAlphabet;
      const size_t len = std::uniform_int_distribution<size_t>(0, long_one ? 16 : 7)(rng);
      for (size_t k = 0; k < len; ++k) s += letters[std::uniform_int_distribution<size_t>(0, letters.size() - 1)(rng)];
      const bool expected = std::regex_match(s, reference);
      matches += expected;
      ASSERT_EQ(full_match(g, s), expected) << "string \"" << s << "\"";
    }
    // Sentences of the automaton match the reference too.
    for (int i = 0; i < 200; ++i) {
      std::string s;
      if (!testing::random_walk(g, rng, s, 64)) continue;
      if (s.find_first_of("\x80\xff") != std::string::npos) continue;  // std::regex is not UTF-8 aware
      bool high = false;
      for (unsigned char c : s) high = high || c >= 0x80;
      if (high) continue;
      ASSERT_TRUE(std::regex_match(s, reference)) << "walk \"" << s << "\"";
    }
  }
}

TEST(Regex, UnicodeIsMatchedByCodePoint) {
  auto greek = compiled(regex_grammar("[α-ω]+"));
  EXPECT_TRUE(full_match(greek, "αβγω"));
  EXPECT_FALSE(full_match(greek, "αa"));
  EXPECT_FALSE(full_match(greek, "\xCE"));  // half a character
  auto dot = compiled(regex_grammar("a.b"));
  EXPECT_TRUE(full_match(dot, "a€b"));
  EXPECT_TRUE(full_match(dot, "a😀b"));
  EXPECT_FALSE(full_match(dot, "a\nb"));
  EXPECT_FALSE(full_match(dot, "a\xFF" "b"));  // not UTF-8
  auto not_a = compiled(regex_grammar("[^a]"));
  EXPECT_TRUE(full_match(not_a, "\xF4\x8F\xBF\xBF"));     // U+10FFFF
  EXPECT_FALSE(full_match(not_a, "\xED\xA0\x80"));        // a surrogate: not UTF-8
  auto escapes = compiled(regex_grammar("\\u{1F600}\\u00e9"));
  EXPECT_TRUE(full_match(escapes, "😀é"));
}

TEST(Regex, ConstructsStdRegexLacks) {
  auto named = compiled(regex_grammar("(?<name>ab)+?"));
  EXPECT_TRUE(full_match(named, "abab"));
  EXPECT_FALSE(full_match(named, ""));
  auto class_dash = compiled(regex_grammar("[\\w-]+"));
  EXPECT_TRUE(full_match(class_dash, "a-b_9"));
  EXPECT_FALSE(full_match(class_dash, "a b"));
  auto empty_class = compiled(regex_grammar("[]a|b"));
  EXPECT_TRUE(full_match(empty_class, "b"));
  EXPECT_FALSE(full_match(empty_class, "a"));
  auto any = compiled(regex_grammar("[^]"));
  EXPECT_TRUE(full_match(any, "\n"));
  EXPECT_TRUE(full_match(any, "€"));
  auto brace = compiled(regex_grammar("a{,2}x{"));
  EXPECT_TRUE(full_match(brace, "a{,2}x{"));
}

TEST(Regex, AnchorsAtTheEndsAreFullMatch) {
  auto g = compiled(regex_grammar("^ab+$"));
  EXPECT_TRUE(full_match(g, "abbb"));
  EXPECT_FALSE(full_match(g, "xabb"));
  auto escaped_dollar = compiled(regex_grammar("a\\$"));
  EXPECT_TRUE(full_match(escaped_dollar, "a$"));
}

TEST(Regex, JsonStringTargetEscapes) {
  GrammarBuilder b;
  RegexExpr r = parse_regex("[\"\\\\\\n\\x01a]+", RegexTarget::kJsonString);
  const uint32_t root = b.add("root", std::move(r.expr));
  auto g = compiled(std::move(b).build(root));
  EXPECT_TRUE(full_match(g, "a\\\"\\\\\\n\\u0001"));
  EXPECT_FALSE(full_match(g, "\""));
  EXPECT_FALSE(full_match(g, "\n"));
}

void expect_error(const std::string& pattern, bool unsupported, const std::string& construct) {
  SCOPED_TRACE(pattern);
  try {
    regex_grammar(pattern);
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_TRUE(unsupported) << e.what();
    EXPECT_EQ(e.construct(), construct);
  } catch (const GrammarError& e) {
    EXPECT_FALSE(unsupported) << e.what();
    EXPECT_EQ(e.construct(), construct);
  }
}

TEST(Regex, ErrorsNameTheConstruct) {
  expect_error("(?=a)b", true, "lookahead (?=)");
  expect_error("(?!a)b", true, "lookahead (?!)");
  expect_error("(?<=a)b", true, "lookbehind (?<=)");
  expect_error("(a)\\1", true, "backreference \\1");
  expect_error("\\bword", true, "word boundary \\b");
  expect_error("a^b", true, "anchor ^ inside the pattern");
  expect_error("a$b", true, "anchor $ inside the pattern");
  expect_error("\\p{L}", true, "Unicode property escape \\p");
  expect_error("(?i)a", true, "group modifier (?i)");
  expect_error("(a", false, "regex");
  expect_error("a)", false, "regex");
  expect_error("*a", false, "regex");
  expect_error("a**", false, "regex");
  expect_error("[b-a]", false, "regex");
  expect_error("[ab", false, "regex");
  expect_error("a{3,2}", false, "regex");
  expect_error("a{2}{1,2}", false, "regex");
  expect_error("a+*", false, "regex");
  expect_error("\\q", false, "regex");
  expect_error("\\x4", false, "regex");
}

}  // namespace
}  // namespace zinfer::grammar
