#include "actors/chat_template/operators.h"

#include <cmath>
#include <cstdint>

#include "actors/chat_template/builtins.h"
#include "actors/chat_template/template_error.h"

namespace zinfer::chat {
namespace {

const char* symbol(ast::Binary::Op op) {
  switch (op) {
    case ast::Binary::Op::Add: return "+";
    case ast::Binary::Op::Sub: return "-";
    case ast::Binary::Op::Mul: return "*";
    case ast::Binary::Op::Div: return "/";
    case ast::Binary::Op::FloorDiv: return "//";
    case ast::Binary::Op::Mod: return "%";
    case ast::Binary::Op::Pow: return "**";
    default: return "?";
  }
}

[[noreturn]] void unsupported(ast::Binary::Op op, const Value& a, const Value& b) {
  throw EvalError(std::string("unsupported operand type(s) for ") + symbol(op) + ": '" + type_name(a) + "' and '" +
                  type_name(b) + "'");
}

Value repeat(const Value& sequence, int64_t times) {
  // The result's size is bounded before it is made (kMaxTemplateText of text, the text of a
  // list's strings included, and kMaxTemplateItems items), so that no repetition exhausts memory
  // on its way to the interpreter's size check.
  size_t unit = 0, items = 0;
  if (sequence.is_string()) {
    unit = sequence.as_string().size();
  } else {
    items = sequence.as_list().size();
    for (const auto& item : sequence.as_list())
      if (item.is_string()) unit += item.as_string().size();
  }
  const auto too_many = [&](size_t per_time, uint64_t limit) {
    return times > 0 && per_time > 0 && static_cast<uint64_t>(times) > limit / per_time;
  };
  if (too_many(unit, kMaxTemplateText) || too_many(items, kMaxTemplateItems))
    throw EvalError("repetition too large for a template (" + std::to_string(times) + " times)");
  if (sequence.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += sequence.as_string();
    return Value(std::move(out));
  }
  List out;
  for (int64_t i = 0; i < times; ++i)
    for (const auto& item : sequence.as_list()) out.push_back(item);
  return Value(std::move(out));
}

// Python ints do not overflow; ours are 64-bit, so an overflow is reported rather than wrapped.
Value checked(ast::Binary::Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  const bool overflow = op == ast::Binary::Op::Add   ? __builtin_add_overflow(a, b, &r)
                        : op == ast::Binary::Op::Sub ? __builtin_sub_overflow(a, b, &r)
                                                     : __builtin_mul_overflow(a, b, &r);
  if (overflow) throw EvalError(std::string("integer overflow in ") + symbol(op) + " (values beyond 64 bits)");
  return Value(r);
}

int64_t floor_div(int64_t a, int64_t b) {
  if (a == INT64_MIN && b == -1) throw EvalError("integer overflow in // (values beyond 64 bits)");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Value arithmetic(ast::Binary::Op op, const Value& a, const Value& b) {
  using Op = ast::Binary::Op;
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    const bool use_float = a.is_float() || b.is_float();
    switch (op) {
      case Op::Add: return use_float ? Value(a.as_float() + b.as_float()) : checked(op, a.as_int(), b.as_int());
      case Op::Sub: return use_float ? Value(a.as_float() - b.as_float()) : checked(op, a.as_int(), b.as_int());
      case Op::Mul: return use_float ? Value(a.as_float() * b.as_float()) : checked(op, a.as_int(), b.as_int());
      case Op::Div:
        if (b.as_float() == 0.0) throw EvalError("division by zero");
        return Value(a.as_float() / b.as_float());
      case Op::FloorDiv:
        if (b.as_float() == 0.0) throw EvalError("integer division or modulo by zero");
        if (use_float) return Value(std::floor(a.as_float() / b.as_float()));
        return Value(floor_div(a.as_int(), b.as_int()));
      case Op::Mod:
        if (b.as_float() == 0.0) throw EvalError("integer division or modulo by zero");
        if (use_float) {
          const double x = a.as_float(), y = b.as_float();
          double r = std::fmod(x, y);
          if (r != 0.0 && ((r < 0) != (y < 0))) r += y;
          return Value(r);
        }
        return Value(a.as_int() - floor_div(a.as_int(), b.as_int()) * b.as_int());
      case Op::Pow:
        if (!use_float && b.as_int() >= 0) {
          // Square-and-multiply, so that 1 ** 10**18 is quick.
          int64_t base = a.as_int(), result = 1;
          for (int64_t e = b.as_int(); e > 0; e >>= 1) {
            if (e & 1) result = checked(Op::Mul, result, base).as_int();
            if (e > 1) base = checked(Op::Mul, base, base).as_int();
          }
          return Value(result);
        }
        return Value(std::pow(a.as_float(), b.as_float()));
      default: break;
    }
  }
  if (op == Op::Add) {
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return a.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
    }
  }
  if (op == Op::Mul) {
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) return repeat(b, a.as_int());
  }
  if (op == Op::Mod && a.is_string()) throw EvalError("unsupported construct: printf-style string formatting with '%'");
  unsupported(op, a, b);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined: return false;  // Jinja's Undefined iterates as empty
    case Value::Kind::String:
      if (!item.is_string()) throw EvalError("'in <string>' requires string as left operand, not " + type_name(item));
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::List:
      for (const auto& element : container.as_list())
        if (equals(element, item)) return true;
      return false;
    case Value::Kind::Dict: return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
    case Value::Kind::Namespace: return item.is_string() && container.as_namespace().attributes.find(item.as_string());
    default: throw EvalError("argument of type '" + type_name(container) + "' is not iterable");
  }
}

}  // namespace zinfer::chat
