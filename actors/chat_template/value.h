// The values a template computes with, modelled on the Python objects Jinja2 sees: None, bool,
// int, float, str, list, dict (insertion-ordered), plus Jinja's Undefined, namespace() objects and
// callables (macros, built-in functions, bound methods). Lists and dicts are shared and immutable
// (transformers renders in Jinja's ImmutableSandboxedEnvironment); a namespace is the one mutable
// object, and is shared by reference as in Python.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace zinfer::chat {

class Value;
class Interpreter;
struct CallArgs;

using List = std::vector<Value>;

// An insertion-ordered dict with string keys (the only keys chat templates and JSON produce).
struct Dict {
  std::vector<std::pair<std::string, Value>> entries;
  const Value* find(std::string_view key) const;
  void set(std::string key, Value value);  // replaces an existing key in place
};

struct Namespace {
  Dict attributes;
};

// Something a template can call: a macro, a global function, a filter used as a function, a bound
// method. Arguments are already evaluated.
struct Callable {
  std::string name;  // for error messages
  virtual ~Callable() = default;
  virtual Value call(Interpreter& interpreter, CallArgs& args) const = 0;
};

// Jinja's Undefined remembers what was looked up, so that using it can say what was missing.
struct Undefined {
  std::string hint;  // e.g. "'foo' is undefined" or "'dict object' has no attribute 'x'"
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string hint) { return Value(Undefined{std::move(hint)}); }
  static Value none() { return Value(nullptr); }
  // A Python tuple: a list that prints as (a, b) and is not equal to a list.
  static Value tuple(List items) {
    Value v(std::move(items));
    v.tuple_ = true;
    return v;
  }
  Value(bool b) : data_(b) {}
  Value(int64_t i) : data_(i) {}
  Value(int i) : data_(static_cast<int64_t>(i)) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(List list) : data_(std::make_shared<const List>(std::move(list))) {}
  Value(Dict dict) : data_(std::make_shared<const Dict>(std::move(dict))) {}
  Value(std::shared_ptr<const List> list) : data_(std::move(list)) {}
  Value(std::shared_ptr<const Dict> dict) : data_(std::move(dict)) {}
  Value(std::shared_ptr<Namespace> ns) : data_(std::move(ns)) {}
  Value(std::shared_ptr<const Callable> fn) : data_(std::move(fn)) {}

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // bool is an int in Python
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }  // lists and tuples
  bool is_tuple() const { return tuple_; }
  bool is_dict() const { return kind() == Kind::Dict; }
  bool is_namespace() const { return kind() == Kind::Namespace; }
  bool is_callable() const { return kind() == Kind::Callable; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;   // Int or Bool
  double as_float() const;  // Int, Bool or Float
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const List& as_list() const { return *std::get<std::shared_ptr<const List>>(data_); }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
  Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(data_); }
  const std::shared_ptr<Namespace>& namespace_handle() const { return std::get<std::shared_ptr<Namespace>>(data_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<const Callable>>(data_); }
  const std::string& undefined_hint() const { return std::get<Undefined>(data_).hint; }

  bool truthy() const;  // Python truthiness; Undefined is false

 private:
  explicit Value(Undefined u) : data_(std::move(u)) {}
  explicit Value(std::nullptr_t) : data_(nullptr) {}
  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, std::shared_ptr<const List>,
               std::shared_ptr<const Dict>, std::shared_ptr<Namespace>, std::shared_ptr<const Callable>>
      data_;
  bool tuple_ = false;
};

// The Python type name ("str", "list", "dict", "NoneType", ...) for error messages.
std::string type_name(const Value& v);

// Python str(v) (what {{ v }} prints; Undefined prints as ""), and repr(v).
std::string to_str(const Value& v);
std::string repr(const Value& v);
std::string format_float(double d);  // Python repr of a float: 1.0, 0.1, 1e-05, 1e+16

// Python ==, and ordering (<0, 0, >0) for numbers, strings and lists; other pairs throw EvalError.
bool equals(const Value& a, const Value& b);
int compare(const Value& a, const Value& b);

// JSON input (messages, extra context) as template values. Integers stay ints, floats floats.
// nlohmann::json sorts object keys; ordered_json keeps the caller's order, as a Python dict does.
Value from_json(const nlohmann::json& j);
Value from_json(const nlohmann::ordered_json& j);

}  // namespace zinfer::chat
