// Regular expressions, the common ECMAScript subset, compiled to grammar: literals (UTF-8), '.',
// classes [...] with ranges and negation, the escapes \d \D \w \W \s \S \n \r \t \f \v \0 \xHH
// \uHHHH \u{H...} and escaped punctuation, groups ( ) (?: ) (?<name> ), alternation, the
// quantifiers ? * + {m} {m,} {m,n} (lazy forms too: the language is the same), and ^ / $ as the
// first / last character of the whole pattern. Lookarounds, backreferences, word boundaries,
// Unicode property escapes, \c and anchors elsewhere are UnsupportedError naming the construct;
// a malformed pattern is a GrammarError.
#pragma once

#include <string_view>

#include "actors/grammar/grammar.h"

namespace zinfer::grammar {

enum class RegexTarget {
  kBytes,       // the pattern's characters as UTF-8 bytes
  kJsonString,  // inside a JSON string: '"', '\' and control characters as JSON escapes
};

struct RegexExpr {
  Expr expr;
  bool anchored_start = false;  // the pattern began with ^
  bool anchored_end = false;    // the pattern ended with $
};

RegexExpr parse_regex(std::string_view pattern, RegexTarget target);

// A grammar whose sentences are the strings the pattern matches in full (guided_regex).
Grammar regex_grammar(std::string_view pattern);

// The grammar of one character as the target writes it, for the given code points.
Expr target_class(std::vector<struct CodepointRange> ranges, bool negated, RegexTarget target);

}  // namespace zinfer::grammar
