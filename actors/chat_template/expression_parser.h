// Parses Jinja expressions with Jinja2's grammar and operator precedence (loosest first):
// conditional, or, and, not, comparisons (in, not in, ==, <, ...), + -, ~, * / // %, **, unary
// minus, then primaries with their postfixes (.attr, [index], [a:b:c], (call)), filters (| f)
// and tests (is t).
#pragma once

#include <vector>

#include "actors/chat_template/token_cursor.h"

namespace zinfer::chat {

class ExpressionParser : public TokenCursor {
 public:
  using TokenCursor::TokenCursor;

 protected:
  using ExprPtr = ast::ExprPtr;
  using Position = ast::Position;

  ExprPtr parse_tuple_expression(bool with_condition = true);
  ExprPtr parse_expression();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_parenthesized(Position p);
  ExprPtr parse_list(Position p);
  ExprPtr parse_dict(Position p);
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_subscript(Position p, ExprPtr object);
  ast::Args parse_args();
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_filter(ExprPtr operand);
  ExprPtr parse_filter_expression(ExprPtr node);
  bool starts_bare_test_argument() const;
};

}  // namespace zinfer::chat
