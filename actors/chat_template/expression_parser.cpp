#include "actors/chat_template/expression_parser.h"

#include <charconv>
#include <cstdlib>
#include <optional>

namespace zinfer::chat {

using namespace ast;

// An expression, or several separated by commas forming a tuple (`{% set a = 1, 2 %}`).
ExprPtr ExpressionParser::parse_tuple_expression(bool with_condition) {
  const Position p = pos();
  ExprPtr first = with_condition ? parse_expression() : parse_or();
  if (!is_op(",")) return first;
  auto tuple = std::make_unique<ListExpr>(p);
  tuple->tuple = true;
  tuple->items.push_back(std::move(first));
  while (accept_op(",")) {
    if (cur().type == T::BlockEnd || cur().type == T::VariableEnd) break;
    tuple->items.push_back(with_condition ? parse_expression() : parse_or());
  }
  return tuple;
}

ExprPtr ExpressionParser::parse_expression() {
  ExprPtr expr = parse_or();
  while (is_name("if")) {
    const Position p = pos();
    advance();
    auto cond = std::make_unique<Conditional>(p);
    cond->then_value = std::move(expr);
    cond->condition = parse_or();
    if (accept_name("else")) cond->else_value = parse_expression();
    expr = std::move(cond);
  }
  return expr;
}

ExprPtr ExpressionParser::parse_or() {
  ExprPtr left = parse_and();
  while (is_name("or")) {
    const Position p = pos();
    advance();
    left = std::make_unique<Binary>(p, Binary::Op::Or, std::move(left), parse_and());
  }
  return left;
}

ExprPtr ExpressionParser::parse_and() {
  ExprPtr left = parse_not();
  while (is_name("and")) {
    const Position p = pos();
    advance();
    left = std::make_unique<Binary>(p, Binary::Op::And, std::move(left), parse_not());
  }
  return left;
}

ExprPtr ExpressionParser::parse_not() {
  if (is_name("not")) {
    const Position p = pos();
    advance();
    return std::make_unique<Unary>(p, Unary::Op::Not, parse_not());
  }
  return parse_compare();
}

ExprPtr ExpressionParser::parse_compare() {
  const Position p = pos();
  ExprPtr first = parse_math1();
  std::unique_ptr<Compare> cmp;
  while (true) {
    std::optional<Compare::Op> op;
    if (cur().type == T::Operator) {
      const std::string& o = cur().text;
      if (o == "==") op = Compare::Op::Eq;
      else if (o == "!=") op = Compare::Op::Ne;
      else if (o == "<") op = Compare::Op::Lt;
      else if (o == "<=") op = Compare::Op::Le;
      else if (o == ">") op = Compare::Op::Gt;
      else if (o == ">=") op = Compare::Op::Ge;
      if (op) advance();
    } else if (is_name("in")) {
      op = Compare::Op::In;
      advance();
    } else if (is_name("not") && peek().type == T::Name && peek().text == "in") {
      op = Compare::Op::NotIn;
      advance();
      advance();
    }
    if (!op) break;
    if (!cmp) {
      cmp = std::make_unique<Compare>(p);
      cmp->first = std::move(first);
    }
    cmp->rest.emplace_back(*op, parse_math1());
  }
  if (cmp) return cmp;
  return first;
}

ExprPtr ExpressionParser::parse_math1() {
  ExprPtr left = parse_concat();
  while (is_op("+") || is_op("-")) {
    const Position p = pos();
    const auto op = advance().text == "+" ? Binary::Op::Add : Binary::Op::Sub;
    left = std::make_unique<Binary>(p, op, std::move(left), parse_concat());
  }
  return left;
}

ExprPtr ExpressionParser::parse_concat() {
  ExprPtr left = parse_math2();
  while (is_op("~")) {
    const Position p = pos();
    advance();
    left = std::make_unique<Binary>(p, Binary::Op::Concat, std::move(left), parse_math2());
  }
  return left;
}

ExprPtr ExpressionParser::parse_math2() {
  ExprPtr left = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Position p = pos();
    const std::string o = advance().text;
    const auto op = o == "*" ? Binary::Op::Mul : o == "/" ? Binary::Op::Div : o == "//" ? Binary::Op::FloorDiv : Binary::Op::Mod;
    left = std::make_unique<Binary>(p, op, std::move(left), parse_pow());
  }
  return left;
}

ExprPtr ExpressionParser::parse_pow() {
  ExprPtr left = parse_unary(true);
  while (is_op("**")) {
    const Position p = pos();
    advance();
    left = std::make_unique<Binary>(p, Binary::Op::Pow, std::move(left), parse_unary(true));
  }
  return left;
}

ExprPtr ExpressionParser::parse_unary(bool with_filter) {
  const NestingGuard guard(*this);
  const Position p = pos();
  ExprPtr node;
  if (accept_op("-")) {
    node = std::make_unique<Unary>(p, Unary::Op::Neg, parse_unary(false));
  } else if (accept_op("+")) {
    node = std::make_unique<Unary>(p, Unary::Op::Pos, parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_expression(std::move(node));
  return node;
}

ExprPtr ExpressionParser::parse_primary() {
  const Position p = pos();
  const Token& t = cur();
  switch (t.type) {
    case T::Name: {
      const std::string name = advance().text;
      if (name == "true" || name == "True") return std::make_unique<Literal>(p, Value(true));
      if (name == "false" || name == "False") return std::make_unique<Literal>(p, Value(false));
      if (name == "none" || name == "None") return std::make_unique<Literal>(p, Value::none());
      return std::make_unique<Name>(p, name);
    }
    case T::String: {
      std::string value = advance().text;
      while (cur().type == T::String) value += advance().text;  // adjacent literals concatenate
      return std::make_unique<Literal>(p, Value(std::move(value)));
    }
    case T::Integer: {
      const std::string text = advance().text;
      int64_t v = 0;
      const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
      if (res.ec != std::errc()) throw TemplateError("integer literal out of range: " + text, p.line, p.column);
      return std::make_unique<Literal>(p, Value(v));
    }
    case T::Float: {
      // strtod, like Python, gives subnormals and infinity where the literal underflows/overflows.
      const std::string text = advance().text;
      return std::make_unique<Literal>(p, Value(std::strtod(text.c_str(), nullptr)));
    }
    case T::Operator:
      if (accept_op("(")) return parse_parenthesized(p);
      if (accept_op("[")) return parse_list(p);
      if (accept_op("{")) return parse_dict(p);
      break;
    default: break;
  }
  fail("unexpected " + describe(t) + " in expression");
}

ExprPtr ExpressionParser::parse_parenthesized(Position p) {
  if (accept_op(")")) {  // the empty tuple
    auto empty = std::make_unique<ListExpr>(p);
    empty->tuple = true;
    return empty;
  }
  ExprPtr first = parse_expression();
  if (accept_op(")")) return first;
  auto tuple = std::make_unique<ListExpr>(p);
  tuple->tuple = true;
  tuple->items.push_back(std::move(first));
  while (accept_op(",")) {
    if (is_op(")")) break;
    tuple->items.push_back(parse_expression());
  }
  expect_op(")");
  return tuple;
}

ExprPtr ExpressionParser::parse_list(Position p) {
  auto list = std::make_unique<ListExpr>(p);
  while (!is_op("]")) {
    list->items.push_back(parse_expression());
    if (!accept_op(",")) break;
  }
  expect_op("]");
  return list;
}

ExprPtr ExpressionParser::parse_dict(Position p) {
  auto dict = std::make_unique<DictExpr>(p);
  while (!is_op("}")) {
    ExprPtr key = parse_expression();
    expect_op(":");
    dict->items.emplace_back(std::move(key), parse_expression());
    if (!accept_op(",")) break;
  }
  expect_op("}");
  return dict;
}

ExprPtr ExpressionParser::parse_postfix(ExprPtr node) {
  while (true) {
    const Position p = pos();
    if (accept_op(".")) {
      if (cur().type == T::Name || cur().type == T::Integer) {
        node = std::make_unique<GetAttr>(p, std::move(node), advance().text);
      } else {
        fail("expected an attribute name after '.', got " + describe(cur()));
      }
    } else if (accept_op("[")) {
      node = parse_subscript(p, std::move(node));
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr ExpressionParser::parse_subscript(Position p, ExprPtr object) {
  ExprPtr start, stop, step;
  if (!is_op(":")) {
    start = parse_expression();
    if (accept_op("]")) return std::make_unique<GetItem>(p, std::move(object), std::move(start));
    if (is_op(",")) fail("unsupported construct: tuple subscript");
  }
  auto slice = std::make_unique<Slice>(p);
  slice->object = std::move(object);
  slice->start = std::move(start);
  expect_op(":");
  if (!is_op(":") && !is_op("]")) slice->stop = parse_expression();
  if (accept_op(":")) {
    if (!is_op("]")) slice->step = parse_expression();
  }
  expect_op("]");
  return slice;
}

Args ExpressionParser::parse_args() {
  Args args;
  expect_op("(");
  while (!is_op(")")) {
    if (is_op("*") || is_op("**")) fail("unsupported construct: *args/**kwargs in a call");
    if (cur().type == T::Name && peek().type == T::Operator && peek().text == "=") {
      std::string key = advance().text;
      advance();
      args.keyword.emplace_back(std::move(key), parse_expression());
    } else {
      if (!args.keyword.empty()) fail("positional argument after a keyword argument");
      args.positional.push_back(parse_expression());
    }
    if (!accept_op(",")) break;
  }
  expect_op(")");
  return args;
}

ExprPtr ExpressionParser::parse_call(ExprPtr callee) {
  auto call = std::make_unique<Call>(pos());
  call->callee = std::move(callee);
  call->args = parse_args();
  return call;
}

// `| name(args)`, or `name(args)` at the start of a {% filter %} block (operand null).
ExprPtr ExpressionParser::parse_filter(ExprPtr operand) {
  auto filter = std::make_unique<Filter>(pos());
  filter->operand = std::move(operand);
  filter->name = expect_name("a filter name");
  while (accept_op(".")) {
    filter->name += '.';
    filter->name += expect_name("a filter name");
  }
  if (is_op("(")) filter->args = parse_args();
  return filter;
}

ExprPtr ExpressionParser::parse_filter_expression(ExprPtr node) {
  while (true) {
    if (accept_op("|")) {
      node = parse_filter(std::move(node));
    } else if (is_name("is")) {
      auto test = std::make_unique<Test>(pos());
      advance();
      test->negated = accept_name("not");
      test->name = expect_name("a test name");
      while (accept_op(".")) {
        test->name += '.';
        test->name += expect_name("a test name");
      }
      test->operand = std::move(node);
      if (is_op("(")) {
        test->args = parse_args();
      } else if (starts_bare_test_argument()) {
        // `x is divisibleby 3`, `x is sameas none`: one argument without parentheses.
        test->args.positional.push_back(parse_postfix(parse_primary()));
      }
      node = std::move(test);
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

bool ExpressionParser::starts_bare_test_argument() const {
  const Token& t = cur();
  if (t.type == T::Name) return t.text != "else" && t.text != "or" && t.text != "and";
  if (t.type == T::String || t.type == T::Integer || t.type == T::Float) return true;
  return t.type == T::Operator && (t.text == "(" || t.text == "[" || t.text == "{");
}

}  // namespace zinfer::chat
