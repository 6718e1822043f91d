#include "actors/chat_template/interpreter.h"

#include <cstdint>

#include "actors/chat_template/operators.h"
#include "actors/chat_template/template_error.h"

namespace zinfer::chat {
namespace {

using namespace ast;

// A {% macro %}: called like a function, it renders its body with the arguments bound.
struct MacroFunction : Callable {
  const Macro* node;
  explicit MacroFunction(const Macro* m) : node(m) { name = m->name; }

  Value call(Interpreter& interpreter, CallArgs& args) const override {
    std::vector<std::string_view> names;
    for (const auto& [param, unused] : node->params) names.push_back(param);
    auto bound = args.bind("macro '" + name + "'", names);
    std::vector<std::pair<std::string, Value>> vars;
    for (size_t i = 0; i < names.size(); ++i) {
      const auto& default_value = node->params[i].second;
      Value v = bound[i] ? *bound[i]
                : default_value ? interpreter.eval(*default_value)
                                : Value::undefined("parameter '" + node->params[i].first + "' was not provided");
      vars.emplace_back(node->params[i].first, std::move(v));
    }
    return Value(interpreter.render_in_new_scope(node->body, std::move(vars)));
  }
};

// loop.cycle(a, b, ...): the argument at loop.index0 modulo their number.
struct LoopCycle : Callable {
  int64_t index0;
  explicit LoopCycle(int64_t i) : index0(i) { name = "loop.cycle"; }
  Value call(Interpreter&, CallArgs& args) const override {
    if (args.positional.empty()) throw EvalError("loop.cycle() needs at least one argument");
    return args.positional[static_cast<size_t>(index0) % args.positional.size()];
  }
};

Value make_loop(const List& items, size_t i) {
  const auto n = static_cast<int64_t>(items.size());
  const auto index0 = static_cast<int64_t>(i);
  Dict loop;
  loop.entries.reserve(12);
  loop.entries.emplace_back("index0", Value(index0));
  loop.entries.emplace_back("index", Value(index0 + 1));
  loop.entries.emplace_back("revindex0", Value(n - index0 - 1));
  loop.entries.emplace_back("revindex", Value(n - index0));
  loop.entries.emplace_back("first", Value(i == 0));
  loop.entries.emplace_back("last", Value(index0 == n - 1));
  loop.entries.emplace_back("length", Value(n));
  loop.entries.emplace_back("depth0", Value(0));
  loop.entries.emplace_back("depth", Value(1));
  if (i > 0) loop.entries.emplace_back("previtem", items[i - 1]);
  if (index0 + 1 < n) loop.entries.emplace_back("nextitem", items[i + 1]);
  loop.entries.emplace_back("cycle", Value(std::shared_ptr<const Callable>(std::make_shared<LoopCycle>(index0))));
  return Value(std::move(loop));
}

}  // namespace

Value* Interpreter::Frame::find(const std::string& name) {
  for (Frame* f = this; f; f = f->parent)
    for (auto& [key, value] : f->vars)
      if (key == name) return &value;
  return nullptr;
}

void Interpreter::Frame::set(const std::string& name, Value value) {
  for (auto& [key, existing] : vars) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  vars.emplace_back(name, std::move(value));
}

Interpreter::Interpreter(Dict context) { root_.vars = std::move(context.entries); }

Interpreter::~Interpreter() {
  for (const auto& weak : assigned_namespaces_) {
    if (auto ns = weak.lock()) ns->attributes.entries.clear();
  }
}

std::string Interpreter::render(const Body& program) {
  std::string out;
  render_body(program, out);
  return out;
}

std::string Interpreter::render_in_new_scope(const Body& body, std::vector<std::pair<std::string, Value>> vars) {
  // A macro that calls itself without end must be an error, not a stack overflow.
  if (call_depth_ >= kMaxCallDepth) throw EvalError("macro calls nested too deeply (recursion?)");
  ++call_depth_;
  Frame frame;
  frame.vars = std::move(vars);
  frame.parent = &root_;
  Frame* saved = frame_;
  frame_ = &frame;
  std::string out;
  render_body(body, out);
  frame_ = saved;
  --call_depth_;
  return out;
}

void Interpreter::spend(const ast::Position& pos) {
  if (++steps_ > kMaxSteps) {
    throw TemplateError("the template does too much work (more than " + std::to_string(kMaxSteps) +
                            " steps in one render)",
                        pos.line, pos.column);
  }
}

Value Interpreter::checked_size(Value value, const ast::Position& pos) {
  // Making a value costs steps by its size too, so that the text and items a render makes in all
  // (not only its largest value) stay bounded: 1 step per 128 bytes, per 16 items.
  if (value.is_string()) steps_ += static_cast<int64_t>(value.as_string().size() / 128);
  if (value.is_list()) steps_ += static_cast<int64_t>(value.as_list().size() / 16);
  spend(pos);
  // EvalErrors: eval() gives them the expression's position.
  if (value.is_string()) check_text_size(value.as_string().size(), "a string of the template");
  if (value.is_list() && value.as_list().size() > kMaxTemplateItems) {
    throw EvalError("a list of the template grew past " + std::to_string(kMaxTemplateItems) + " items");
  }
  return value;
}

Interpreter::Flow Interpreter::render_body(const Body& body, std::string& out) {
  for (const auto& stmt : body) {
    spend(stmt->pos);
    const Flow flow = render_stmt(*stmt, out);
    if (out.size() > kMaxTemplateText) {
      throw TemplateError("the rendered text grew past " + std::to_string(kMaxTemplateText >> 20) + " MiB",
                          stmt->pos.line, stmt->pos.column);
    }
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::render_stmt(const Stmt& stmt, std::string& out) {
  try {
    switch (stmt.kind) {
      case Stmt::Kind::Text: out += static_cast<const Text&>(stmt).text; break;
      case Stmt::Kind::Print: out += to_str(eval(*static_cast<const Print&>(stmt).value)); break;
      case Stmt::Kind::If: return render_if(static_cast<const If&>(stmt), out);
      case Stmt::Kind::For: return render_for(static_cast<const For&>(stmt), out);
      case Stmt::Kind::Set: render_set(static_cast<const Set&>(stmt)); break;
      case Stmt::Kind::BlockSet: {
        const auto& node = static_cast<const BlockSet&>(stmt);
        std::string captured;
        render_body(node.body, captured);
        assign(node.target, Value(std::move(captured)));
        break;
      }
      case Stmt::Kind::Macro: {
        const auto& node = static_cast<const Macro&>(stmt);
        frame_->set(node.name, Value(std::shared_ptr<const Callable>(std::make_shared<MacroFunction>(&node))));
        break;
      }
      case Stmt::Kind::FilterBlock: {
        const auto& node = static_cast<const FilterBlock&>(stmt);
        std::string captured;
        render_body(node.body, captured);
        Value value(std::move(captured));
        for (const auto& filter : node.filters) value = apply_filter(static_cast<const Filter&>(*filter), value);
        out += to_str(value);
        break;
      }
      case Stmt::Kind::Break: return Flow::Break;
      case Stmt::Kind::Continue: return Flow::Continue;
      case Stmt::Kind::Scope: return render_body(static_cast<const Scope&>(stmt).body, out);
    }
  } catch (const EvalError& e) {
    throw TemplateError(e.what(), stmt.pos.line, stmt.pos.column);
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::render_if(const If& node, std::string& out) {
  for (const auto& [condition, body] : node.branches)
    if (eval(*condition).truthy()) return render_body(body, out);
  return render_body(node.else_body, out);
}

Interpreter::Flow Interpreter::render_for(const For& node, std::string& out) {
  const Value iterable = eval(*node.iterable);
  List items = iterate(iterable);
  Frame* const outer = frame_;
  auto bind_targets = [&](Frame& frame, const Value& item) {
    if (node.targets.size() == 1) {
      frame.set(node.targets[0], item);
      return;
    }
    if (!item.is_list() || item.as_list().size() != node.targets.size()) {
      throw TemplateError("cannot unpack " + repr(item) + " into " + std::to_string(node.targets.size()) + " loop variables",
                          node.pos.line, node.pos.column);
    }
    for (size_t t = 0; t < node.targets.size(); ++t) frame.set(node.targets[t], item.as_list()[t]);
  };
  if (node.filter) {  // the loop's `if` filters first, so loop.length and loop.last count what remains
    List kept;
    for (const auto& item : items) {
      spend(node.pos);
      Frame frame;
      frame.parent = outer;
      bind_targets(frame, item);
      frame_ = &frame;
      const bool keep = eval(*node.filter).truthy();
      frame_ = outer;
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    spend(node.pos);
    Frame frame;  // fresh each iteration: a {% set %} in the body does not survive it
    frame.parent = outer;
    bind_targets(frame, items[i]);
    frame.set("loop", make_loop(items, i));
    frame_ = &frame;
    const Flow flow = render_body(node.body, out);
    frame_ = outer;
    if (flow == Flow::Break) break;
  }
  if (items.empty()) return render_body(node.else_body, out);
  return Flow::Normal;
}

void Interpreter::render_set(const Set& node) {
  Value value = eval(*node.value);
  if (node.targets.size() == 1) {
    assign(node.targets[0], std::move(value));
    return;
  }
  const List items = iterate(value);
  if (items.size() != node.targets.size()) {
    throw TemplateError("cannot unpack " + std::to_string(items.size()) + " values into " +
                            std::to_string(node.targets.size()) + " variables",
                        node.pos.line, node.pos.column);
  }
  for (size_t i = 0; i < items.size(); ++i) assign(node.targets[i], items[i]);
}

void Interpreter::assign(const Target& target, Value value) {
  if (!target.attribute) {
    frame_->set(target.name, std::move(value));
    return;
  }
  Value* object = frame_->find(target.name);
  if (!object || !object->is_namespace()) {
    throw TemplateError("cannot assign attribute '" + *target.attribute + "' on '" + target.name +
                            "': it is not a namespace() object",
                        target.pos.line, target.pos.column);
  }
  const std::shared_ptr<Namespace>& ns = object->namespace_handle();
  if (assigned_seen_.insert(ns.get()).second) assigned_namespaces_.push_back(ns);
  ns->attributes.set(*target.attribute, std::move(value));
}

Value Interpreter::lookup(const std::string& name) {
  if (const Value* v = frame_->find(name)) return *v;
  Value global = find_global(name);
  if (!global.is_undefined()) return global;
  return Value::undefined("'" + name + "' is undefined");
}

CallArgs Interpreter::eval_args(const Args& args) {
  CallArgs out;
  out.positional.reserve(args.positional.size());
  for (const auto& e : args.positional) out.positional.push_back(eval(*e));
  for (const auto& [key, e] : args.keyword) out.keyword.emplace_back(key, eval(*e));
  return out;
}

Value Interpreter::apply_filter(const Filter& node, const Value& operand) {
  // Like Jinja 3, an unknown filter fails when it runs, so a template whose unsupported part sits
  // in a branch that is not taken (e.g. tool calling) still renders.
  const FilterFn fn = find_filter(node.name);
  if (!fn) throw TemplateError("unsupported filter '" + node.name + "'", node.pos.line, node.pos.column);
  CallArgs args = eval_args(node.args);
  try {
    return fn(operand, args);
  } catch (const EvalError& e) {
    throw TemplateError("filter '" + node.name + "': " + e.what(), node.pos.line, node.pos.column);
  }
}

Value Interpreter::eval(const Expr& expr) {
  spend(expr.pos);
  try {
    return checked_size(eval_inner(expr), expr.pos);
  } catch (const EvalError& e) {
    throw TemplateError(e.what(), expr.pos.line, expr.pos.column);
  }
}

Value Interpreter::eval_inner(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::Literal: return static_cast<const Literal&>(expr).value;
    case Expr::Kind::Name: return lookup(static_cast<const Name&>(expr).name);
    case Expr::Kind::List: {
      const auto& node = static_cast<const ListExpr&>(expr);
      List items;
      items.reserve(node.items.size());
      for (const auto& item : node.items) items.push_back(eval(*item));
      return node.tuple ? Value::tuple(std::move(items)) : Value(std::move(items));
    }
    case Expr::Kind::Dict: {
      Dict dict;
      for (const auto& [key_expr, value_expr] : static_cast<const DictExpr&>(expr).items) {
        const Value key = eval(*key_expr);
        if (!key.is_string()) throw EvalError("unsupported construct: dict literal key of type '" + type_name(key) + "'");
        dict.set(key.as_string(), eval(*value_expr));
      }
      return Value(std::move(dict));
    }
    case Expr::Kind::GetAttr: {
      const auto& node = static_cast<const GetAttr&>(expr);
      const Value object = eval(*node.object);
      if (object.is_undefined()) fail_undefined(object);
      return get_attribute(object, node.name);
    }
    case Expr::Kind::GetItem: {
      const auto& node = static_cast<const GetItem&>(expr);
      const Value object = eval(*node.object);
      if (object.is_undefined()) fail_undefined(object);
      return get_item(object, eval(*node.index));
    }
    case Expr::Kind::Slice: {
      const auto& node = static_cast<const Slice&>(expr);
      const Value object = eval(*node.object);
      if (object.is_undefined()) fail_undefined(object);
      auto part = [&](const ExprPtr& e) { return e ? eval(*e) : Value::none(); };
      return get_slice(object, part(node.start), part(node.stop), part(node.step));
    }
    case Expr::Kind::Call: {
      const auto& node = static_cast<const Call&>(expr);
      const Value callee = eval(*node.callee);
      if (callee.is_undefined()) fail_undefined(callee);
      if (!callee.is_callable()) throw EvalError("'" + type_name(callee) + "' object is not callable");
      CallArgs args = eval_args(node.args);
      return callee.as_callable().call(*this, args);
    }
    case Expr::Kind::Filter: {
      const auto& node = static_cast<const Filter&>(expr);
      return apply_filter(node, eval(*node.operand));
    }
    case Expr::Kind::Test: {
      const auto& node = static_cast<const Test&>(expr);
      const TestFn fn = find_test(node.name);
      if (!fn) throw EvalError("unsupported test '" + node.name + "'");
      const Value operand = eval(*node.operand);
      const CallArgs args = eval_args(node.args);
      return Value(fn(operand, args) != node.negated);
    }
    case Expr::Kind::Unary: {
      const auto& node = static_cast<const Unary&>(expr);
      const Value operand = eval(*node.operand);
      if (node.op == Unary::Op::Not) return Value(!operand.truthy());
      if (operand.is_undefined()) fail_undefined(operand);
      if (!operand.is_number()) throw EvalError("bad operand type for unary " + std::string(node.op == Unary::Op::Neg ? "-" : "+") + ": '" + type_name(operand) + "'");
      if (node.op == Unary::Op::Pos) return operand.is_float() ? operand : Value(operand.as_int());
      if (operand.is_float()) return Value(-operand.as_float());
      if (operand.as_int() == INT64_MIN) throw EvalError("integer overflow in unary - (values beyond 64 bits)");
      return Value(-operand.as_int());
    }
    case Expr::Kind::Binary: return eval_binary(static_cast<const Binary&>(expr));
    case Expr::Kind::Compare: return Value(eval_compare(static_cast<const Compare&>(expr)));
    case Expr::Kind::Conditional: {
      const auto& node = static_cast<const Conditional&>(expr);
      if (eval(*node.condition).truthy()) return eval(*node.then_value);
      if (node.else_value) return eval(*node.else_value);
      return Value::undefined("the conditional expression has no else branch");
    }
  }
  throw EvalError("unsupported expression");
}

Value Interpreter::eval_binary(const Binary& node) {
  switch (node.op) {
    case Binary::Op::And: {
      Value left = eval(*node.left);
      return left.truthy() ? eval(*node.right) : left;
    }
    case Binary::Op::Or: {
      Value left = eval(*node.left);
      return left.truthy() ? left : eval(*node.right);
    }
    case Binary::Op::Concat: return Value(to_str(eval(*node.left)) + to_str(eval(*node.right)));
    default: {
      const Value left = eval(*node.left);
      const Value right = eval(*node.right);
      return arithmetic(node.op, left, right);
    }
  }
}

bool Interpreter::eval_compare(const Compare& node) {
  Value left = eval(*node.first);
  for (const auto& [op, right_expr] : node.rest) {
    Value right = eval(*right_expr);
    bool holds = false;
    switch (op) {
      case Compare::Op::Eq: holds = equals(left, right); break;
      case Compare::Op::Ne: holds = !equals(left, right); break;
      case Compare::Op::In: holds = contains(right, left); break;
      case Compare::Op::NotIn: holds = !contains(right, left); break;
      default: {
        if (left.is_undefined()) fail_undefined(left);
        if (right.is_undefined()) fail_undefined(right);
        const int c = compare(left, right);
        holds = op == Compare::Op::Lt ? c < 0 : op == Compare::Op::Le ? c <= 0 : op == Compare::Op::Gt ? c > 0 : c >= 0;
      }
    }
    if (!holds) return false;
    left = std::move(right);
  }
  return true;
}

}  // namespace zinfer::chat
