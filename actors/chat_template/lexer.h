// Splits a template into tokens the way Jinja2's lexer does with transformers' settings
// (trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False): template text, the
// {{ }} / {% %} delimiters with their whitespace control (- and +), and the expression tokens
// inside them. Comments ({# #}) are consumed here and never reach the parser.
#pragma once

#include <string>
#include <vector>

namespace zinfer::chat {

struct Token {
  enum class Type { Text, VariableBegin, VariableEnd, BlockBegin, BlockEnd, Name, String, Integer, Float, Operator, End };
  Type type;
  std::string text;  // Text: the data; String: the decoded value; others: the source spelling
  int line = 0;      // 1-based position of the token's first character in the template
  int column = 0;
};

std::vector<Token> tokenize(const std::string& source);  // throws TemplateError

}  // namespace zinfer::chat
