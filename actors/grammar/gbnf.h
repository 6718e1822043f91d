// GBNF, llama.cpp's EBNF dialect (what vLLM users send as `grammar`): rules `name ::= body`, the
// start rule `root`; bodies of "literals" (escapes \n \r \t \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH),
// character classes [...] / [^...] over code points, '.' (any character), rule names, groups,
// alternation '|', and the repetitions * + ? {m} {m,} {m,n}; '#' comments. A body continues on
// the next line inside parentheses and after '|' (and, beyond llama.cpp, when the next line starts
// with '|'). Token references (<...>, <[id]>) are UnsupportedError; an undefined rule, a missing
// root, a duplicate rule and left recursion are GrammarError naming the rule.
#pragma once

#include <string_view>

#include "actors/grammar/grammar.h"

namespace zinfer::grammar {

Grammar gbnf_grammar(std::string_view text);

}  // namespace zinfer::grammar
