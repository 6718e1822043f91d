// GBNF: llama.cpp-style grammars (JSON, arithmetic, lists), its literal and class syntax, and
// the errors it names.
#include <gtest/gtest.h>

#include "actors/grammar/errors.h"
#include "actors/grammar/gbnf.h"
#include "tests/grammar/support.h"

namespace zinfer::grammar {
namespace {

using testing::compiled;
using testing::full_match;

// Written after the shape of llama.cpp's grammars/json.gbnf.
const char* kJson = R"(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)";

TEST(Gbnf, JsonGrammar) {
  auto g = compiled(gbnf_grammar(kJson));
  for (const char* yes : {"{}", "{\"a\": 1}", "{\"a\":[1, 2.5e3, \"x\\n\", true, null], \"b\": {}}", "{\"é\": \"😀\"}"})
    EXPECT_TRUE(full_match(g, yes)) << yes;
  for (const char* no : {"", "[]", "{", "{\"a\" 1}", "{\"a\": 01x}", "{\"a\": \"\x01\"}", "{'a': 1}"})
    EXPECT_FALSE(full_match(g, no)) << no;
}

TEST(Gbnf, ArithmeticWithRecursionAndComments) {
  auto g = compiled(gbnf_grammar(R"G(# arithmetic
root ::= expr
expr ::= term (("+" | "-") term)*   # sums
term ::= factor (("*" | "/") factor)*
factor ::= [0-9]+ | "(" expr ")"
)G"));
  for (const char* yes : {"1", "1+2*3", "(1+2)*3", "((4))/2-1"}) EXPECT_TRUE(full_match(g, yes)) << yes;
  for (const char* no : {"", "1+", "(1", "1)", "a"}) EXPECT_FALSE(full_match(g, no)) << no;
}

TEST(Gbnf, LiteralsClassesAndRepetition) {
  auto g = compiled(gbnf_grammar(
      "root ::= \"\\x41\\u00e9\\U0001F600\\t\\\"\" [^a-c\\]] . x{2} y{1,} z{0,2} w?\n"
      "x ::= \"x\"\ny ::= \"y\"\nz ::= \"z\"\nw ::= \"w\""));
  EXPECT_TRUE(full_match(g, "Aé😀\t\"d€xxy"));
  EXPECT_TRUE(full_match(g, "Aé😀\t\"d\nxxy"));  // '.' is any character, newline included
  EXPECT_TRUE(full_match(g, "Aé😀\t\"d!xxyyyzzw"));
  EXPECT_FALSE(full_match(g, "Aé😀\t\"]!xxy"));  // ']' is excluded
  EXPECT_FALSE(full_match(g, "Aé😀\t\"a!xxy"));
  EXPECT_FALSE(full_match(g, "Aé😀\t\"d!xy"));
  EXPECT_FALSE(full_match(g, "Aé😀\t\"d!xxyzzz"));
}

TEST(Gbnf, AlternativesContinueAfterBarsAndOnBarLines) {
  auto g = compiled(gbnf_grammar("root ::= \"a\" |\n  \"b\"\n  | \"c\"\nunused ::= \"d\""));
  for (const char* yes : {"a", "b", "c"}) EXPECT_TRUE(full_match(g, yes)) << yes;
  EXPECT_FALSE(full_match(g, "d"));
  auto empty_alt = compiled(gbnf_grammar("root ::= | \"x\""));
  EXPECT_TRUE(full_match(empty_alt, ""));
  EXPECT_TRUE(full_match(empty_alt, "x"));
}

void expect_error(const std::string& text, const std::string& construct, bool unsupported = false) {
  SCOPED_TRACE(text);
  try {
    gbnf_grammar(text);
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_TRUE(unsupported) << e.what();
    EXPECT_EQ(e.construct(), construct);
  } catch (const GrammarError& e) {
    EXPECT_FALSE(unsupported) << e.what();
    EXPECT_EQ(e.construct(), construct) << e.what();
  }
}

TEST(Gbnf, ErrorsNameTheRuleOrConstruct) {
  expect_error("start ::= \"a\"", "root");
  expect_error("root ::= missing", "missing");
  expect_error("root ::= \"a\"\nroot ::= \"b\"", "root");
  expect_error("root ::= root \"a\" | \"b\"", "root");
  expect_error("root ::= <think> \"a\"", "token reference", true);
  expect_error("root ::= \"a", "grammar");
  expect_error("root ::= [a-", "grammar");
  expect_error("root := \"a\"", "grammar");
  expect_error("root ::= (\"a\"", "grammar");
  expect_error("root ::= \"a\"{3,1}", "grammar");
  expect_error("root ::= \"\\q\"", "grammar");
}

}  // namespace
}  // namespace zinfer::grammar
