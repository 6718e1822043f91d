// Jinja's built-in tests: `x is defined`, `x is not none`, `n is divisibleby(3)`, ...
#include <cmath>
#include <unordered_map>

#include "actors/chat_template/builtins.h"
#include "actors/chat_template/template_error.h"
#include "actors/text/utf8.h"

namespace zinfer::chat {
namespace {

const Value& single_arg(const CallArgs& a, const char* test) {
  if (a.positional.size() != 1 || !a.keyword.empty()) throw EvalError(std::string("test '") + test + "' takes one argument");
  return a.positional[0];
}

void no_args(const CallArgs& a, const char* test) {
  if (!a.positional.empty() || !a.keyword.empty()) throw EvalError(std::string("test '") + test + "' takes no arguments");
}

bool t_defined(const Value& v, const CallArgs& a) { no_args(a, "defined"); return !v.is_undefined(); }
bool t_undefined(const Value& v, const CallArgs& a) { no_args(a, "undefined"); return v.is_undefined(); }
bool t_none(const Value& v, const CallArgs& a) { no_args(a, "none"); return v.is_none(); }
bool t_string(const Value& v, const CallArgs& a) { no_args(a, "string"); return v.is_string(); }
bool t_number(const Value& v, const CallArgs& a) { no_args(a, "number"); return v.is_number(); }
bool t_integer(const Value& v, const CallArgs& a) { no_args(a, "integer"); return v.is_int(); }
bool t_float(const Value& v, const CallArgs& a) { no_args(a, "float"); return v.is_float(); }
bool t_boolean(const Value& v, const CallArgs& a) { no_args(a, "boolean"); return v.is_bool(); }
bool t_mapping(const Value& v, const CallArgs& a) { no_args(a, "mapping"); return v.is_dict(); }
// Python's iter()/len() succeed on these; Jinja's Undefined iterates as empty and has len 0.
bool t_iterable(const Value& v, const CallArgs& a) {
  no_args(a, "iterable");
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
bool t_sequence(const Value& v, const CallArgs& a) {
  no_args(a, "sequence");
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
bool t_true(const Value& v, const CallArgs& a) { no_args(a, "true"); return v.is_bool() && v.as_bool(); }
bool t_false(const Value& v, const CallArgs& a) { no_args(a, "false"); return v.is_bool() && !v.as_bool(); }
bool t_callable(const Value& v, const CallArgs& a) { no_args(a, "callable"); return v.is_callable(); }

int64_t integer_operand(const Value& v, const char* test) {
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_int() && !v.is_bool()) throw EvalError(std::string("test '") + test + "' needs an integer, not " + type_name(v));
  return v.as_int();
}
// Python's value % 2 == 0 / == 1, which floats answer too (0.5 is neither even nor odd).
double python_mod2(const Value& v, const char* test) {
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_number()) throw EvalError(std::string("test '") + test + "' needs a number, not " + type_name(v));
  if (!v.is_float()) return static_cast<double>(((v.as_int() % 2) + 2) % 2);
  const double r = std::fmod(v.as_float(), 2.0);
  return r < 0 ? r + 2.0 : r;
}
bool t_even(const Value& v, const CallArgs& a) { no_args(a, "even"); return python_mod2(v, "even") == 0.0; }
bool t_odd(const Value& v, const CallArgs& a) { no_args(a, "odd"); return python_mod2(v, "odd") == 1.0; }
bool t_divisibleby(const Value& v, const CallArgs& a) {
  const int64_t d = integer_operand(single_arg(a, "divisibleby"), "divisibleby");
  if (d == 0) throw EvalError("divisibleby(0)");
  return integer_operand(v, "divisibleby") % d == 0;
}

bool t_eq(const Value& v, const CallArgs& a) { return equals(v, single_arg(a, "eq")); }
bool t_ne(const Value& v, const CallArgs& a) { return !equals(v, single_arg(a, "ne")); }
bool t_lt(const Value& v, const CallArgs& a) { return compare(v, single_arg(a, "lt")) < 0; }
bool t_le(const Value& v, const CallArgs& a) { return compare(v, single_arg(a, "le")) <= 0; }
bool t_gt(const Value& v, const CallArgs& a) { return compare(v, single_arg(a, "gt")) > 0; }
bool t_ge(const Value& v, const CallArgs& a) { return compare(v, single_arg(a, "ge")) >= 0; }

bool t_in(const Value& v, const CallArgs& a) {
  const Value& container = single_arg(a, "in");
  if (container.is_string()) return v.is_string() && container.as_string().find(v.as_string()) != std::string::npos;
  for (const auto& item : iterate(container))
    if (equals(item, v)) return true;
  return false;
}

// `x is sameas y`: Python identity, which for the immutable singletons is equality of kind and value.
bool t_sameas(const Value& v, const CallArgs& a) {
  const Value& other = single_arg(a, "sameas");
  if (v.kind() != other.kind()) return false;
  if (v.is_none() || v.is_undefined()) return true;
  if (v.is_bool()) return v.as_bool() == other.as_bool();
  return equals(v, other) && (v.is_int() || v.is_namespace() || v.is_callable());
}

// Python str.islower()/isupper() of str(value): some cased character, and none of the other case.
bool cased_all(const Value& v, bool want_lower) {
  const std::string s = to_str(v);
  bool any_cased = false;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t cp = utf8::next(s, pos);
    const bool is_lower = utf8::to_upper(cp) != cp;
    const bool is_upper = utf8::to_lower(cp) != cp;
    if (want_lower ? is_upper : is_lower) return false;
    any_cased = any_cased || is_lower || is_upper;
  }
  return any_cased;
}
bool t_lower(const Value& v, const CallArgs& a) {
  no_args(a, "lower");
  return cased_all(v, true);
}
bool t_upper(const Value& v, const CallArgs& a) {
  no_args(a, "upper");
  return cased_all(v, false);
}

const std::unordered_map<std::string_view, TestFn>& tests() {
  static const std::unordered_map<std::string_view, TestFn> table = {
      {"defined", t_defined},   {"undefined", t_undefined}, {"none", t_none},         {"string", t_string},
      {"number", t_number},     {"integer", t_integer},     {"float", t_float},       {"boolean", t_boolean},
      {"mapping", t_mapping},   {"iterable", t_iterable},   {"sequence", t_sequence}, {"true", t_true},
      {"false", t_false},       {"callable", t_callable},   {"even", t_even},         {"odd", t_odd},
      {"divisibleby", t_divisibleby}, {"eq", t_eq},         {"equalto", t_eq},        {"==", t_eq},
      {"ne", t_ne},             {"!=", t_ne},               {"lt", t_lt},             {"lessthan", t_lt},
      {"<", t_lt},              {"le", t_le},               {"<=", t_le},             {"gt", t_gt},
      {"greaterthan", t_gt},    {">", t_gt},                {"ge", t_ge},             {">=", t_ge},
      {"in", t_in},             {"sameas", t_sameas},       {"lower", t_lower},       {"upper", t_upper},
  };
  return table;
}

}  // namespace

TestFn find_test(std::string_view name) {
  const auto it = tests().find(name);
  return it == tests().end() ? nullptr : it->second;
}

}  // namespace zinfer::chat
