// The syntax tree of a parsed template: expressions (Expr) and statements (Stmt). Plain data; the
// parser builds it once and the evaluator walks it on every render. Every node keeps the line and
// column where it starts, so that a render error can point into the template.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/chat_template/value.h"

namespace zinfer::chat::ast {

struct Position {
  int line = 0;
  int column = 0;
};

// ---- expressions ----

struct Expr {
  enum class Kind { Literal, Name, List, Dict, GetAttr, GetItem, Slice, Call, Filter, Test, Unary, Binary, Compare, Conditional };
  Kind kind;
  Position pos;
  explicit Expr(Kind k, Position p) : kind(k), pos(p) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Args {  // the arguments of a call, filter or test, as written
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct Literal : Expr {
  Value value;
  Literal(Position p, Value v) : Expr(Kind::Literal, p), value(std::move(v)) {}
};
struct Name : Expr {
  std::string name;
  Name(Position p, std::string n) : Expr(Kind::Name, p), name(std::move(n)) {}
};
struct ListExpr : Expr {  // list and tuple literals alike
  std::vector<ExprPtr> items;
  bool tuple = false;
  explicit ListExpr(Position p) : Expr(Kind::List, p) {}
};
struct DictExpr : Expr {
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
  explicit DictExpr(Position p) : Expr(Kind::Dict, p) {}
};
struct GetAttr : Expr {  // obj.name
  ExprPtr object;
  std::string name;
  GetAttr(Position p, ExprPtr o, std::string n) : Expr(Kind::GetAttr, p), object(std::move(o)), name(std::move(n)) {}
};
struct GetItem : Expr {  // obj[index]
  ExprPtr object, index;
  GetItem(Position p, ExprPtr o, ExprPtr i) : Expr(Kind::GetItem, p), object(std::move(o)), index(std::move(i)) {}
};
struct Slice : Expr {  // obj[start:stop:step], each part optional
  ExprPtr object, start, stop, step;
  explicit Slice(Position p) : Expr(Kind::Slice, p) {}
};
struct Call : Expr {
  ExprPtr callee;
  Args args;
  explicit Call(Position p) : Expr(Kind::Call, p) {}
};
struct Filter : Expr {  // operand | name(args); operand is null inside {% filter %} blocks
  ExprPtr operand;
  std::string name;
  Args args;
  explicit Filter(Position p) : Expr(Kind::Filter, p) {}
};
struct Test : Expr {  // operand is [not] name(args)
  ExprPtr operand;
  std::string name;
  Args args;
  bool negated = false;
  explicit Test(Position p) : Expr(Kind::Test, p) {}
};
struct Unary : Expr {
  enum class Op { Not, Neg, Pos };
  Op op;
  ExprPtr operand;
  Unary(Position p, Op o, ExprPtr e) : Expr(Kind::Unary, p), op(o), operand(std::move(e)) {}
};
struct Binary : Expr {
  enum class Op { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Concat, And, Or };
  Op op;
  ExprPtr left, right;
  Binary(Position p, Op o, ExprPtr l, ExprPtr r) : Expr(Kind::Binary, p), op(o), left(std::move(l)), right(std::move(r)) {}
};
struct Compare : Expr {  // a < b <= c: chained as in Python
  enum class Op { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };
  ExprPtr first;
  std::vector<std::pair<Op, ExprPtr>> rest;
  explicit Compare(Position p) : Expr(Kind::Compare, p) {}
};
struct Conditional : Expr {  // then_value if condition else else_value (else optional)
  ExprPtr condition, then_value, else_value;
  explicit Conditional(Position p) : Expr(Kind::Conditional, p) {}
};

// ---- statements ----

struct Stmt {
  enum class Kind { Text, Print, If, For, Set, BlockSet, Macro, FilterBlock, Break, Continue, Scope };
  Kind kind;
  Position pos;
  explicit Stmt(Kind k, Position p) : kind(k), pos(p) {}
  virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Text : Stmt {
  std::string text;
  Text(Position p, std::string t) : Stmt(Kind::Text, p), text(std::move(t)) {}
};
struct Print : Stmt {
  ExprPtr value;
  Print(Position p, ExprPtr v) : Stmt(Kind::Print, p), value(std::move(v)) {}
};
struct If : Stmt {
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, then each elif
  Body else_body;
  explicit If(Position p) : Stmt(Kind::If, p) {}
};
struct For : Stmt {
  std::vector<std::string> targets;  // one name, or several to unpack each item into
  ExprPtr iterable;
  ExprPtr filter;  // `for x in xs if cond`: null when absent
  Body body, else_body;
  explicit For(Position p) : Stmt(Kind::For, p) {}
};
// An assignment target: a name, or namespace.attribute.
struct Target {
  std::string name;
  std::optional<std::string> attribute;
  Position pos;
};
struct Set : Stmt {
  std::vector<Target> targets;  // several when unpacking a sequence
  ExprPtr value;
  explicit Set(Position p) : Stmt(Kind::Set, p) {}
};
struct BlockSet : Stmt {  // {% set x %}...{% endset %}
  Target target;
  Body body;
  explicit BlockSet(Position p) : Stmt(Kind::BlockSet, p) {}
};
struct Macro : Stmt {
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> params;  // default expression or null
  Body body;
  explicit Macro(Position p) : Stmt(Kind::Macro, p) {}
};
struct FilterBlock : Stmt {  // {% filter a | b(x) %}...{% endfilter %}: filters with null operands
  std::vector<ExprPtr> filters;
  Body body;
  explicit FilterBlock(Position p) : Stmt(Kind::FilterBlock, p) {}
};
struct Break : Stmt {
  explicit Break(Position p) : Stmt(Kind::Break, p) {}
};
struct Continue : Stmt {
  explicit Continue(Position p) : Stmt(Kind::Continue, p) {}
};
struct Scope : Stmt {  // a body rendered as is: transformers' {% generation %} block
  Body body;
  explicit Scope(Position p) : Stmt(Kind::Scope, p) {}
};

}  // namespace zinfer::chat::ast
