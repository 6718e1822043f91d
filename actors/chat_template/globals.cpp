// The global functions a chat template can call: Jinja's range, namespace, dict, joiner, and
// transformers' raise_exception and strftime_now.
#include <ctime>

#include "actors/chat_template/builtins.h"
#include "actors/chat_template/template_error.h"

namespace zinfer::chat {
namespace {

using Params = std::vector<std::string_view>;

template <typename Fn>
struct Function : Callable {
  Fn fn;
  Function(std::string function_name, Fn f) : fn(std::move(f)) { name = std::move(function_name); }
  Value call(Interpreter&, CallArgs& args) const override { return fn(args); }
};

template <typename Fn>
Value make_function(std::string name, Fn fn) {
  return Value(std::shared_ptr<const Callable>(std::make_shared<Function<Fn>>(std::move(name), std::move(fn))));
}

int64_t integer(const Value& v, const char* what) {
  if (!v.is_int() && !v.is_bool()) throw EvalError(std::string(what) + " must be an integer, not " + type_name(v));
  return v.as_int();
}

Value range_fn(CallArgs& a) {
  if (!a.keyword.empty() || a.positional.empty() || a.positional.size() > 3)
    throw EvalError("range() takes 1 to 3 positional arguments");
  int64_t start = 0, stop, step = 1;
  if (a.positional.size() == 1) {
    stop = integer(a.positional[0], "range stop");
  } else {
    start = integer(a.positional[0], "range start");
    stop = integer(a.positional[1], "range stop");
    if (a.positional.size() == 3) step = integer(a.positional[2], "range step");
  }
  if (step == 0) throw EvalError("range() arg 3 must not be zero");
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    // transformers renders in Jinja's sandbox, whose range() refuses more than 100,000 items.
    if (out.size() >= 100'000) throw EvalError("range() too large for a template (more than 100000 items)");
    out.emplace_back(i);
  }
  return Value(std::move(out));
}

// namespace(a=1) / namespace({'a': 1}): a mutable object whose attributes survive loop scopes.
Value namespace_fn(CallArgs& a) {
  auto ns = std::make_shared<Namespace>();
  for (const auto& arg : a.positional) {
    if (!arg.is_dict()) throw EvalError("namespace() positional argument must be a dict, not " + type_name(arg));
    for (const auto& [key, value] : arg.as_dict().entries) ns->attributes.set(key, value);
  }
  for (const auto& [key, value] : a.keyword) ns->attributes.set(key, value);
  return Value(std::move(ns));
}

Value dict_fn(CallArgs& a) {
  Dict d;
  for (const auto& arg : a.positional) {
    if (!arg.is_dict()) throw EvalError("dict() positional argument must be a dict, not " + type_name(arg));
    for (const auto& [key, value] : arg.as_dict().entries) d.set(key, value);
  }
  for (const auto& [key, value] : a.keyword) d.set(key, value);
  return Value(std::move(d));
}

Value raise_exception_fn(CallArgs& a) {
  auto p = a.bind("raise_exception", Params{"message"});
  throw EvalError(p[0] ? to_str(*p[0]) : std::string("raise_exception() called"));
}

// transformers: datetime.now().strftime(format), in local time.
Value strftime_now_fn(CallArgs& a) {
  auto p = a.bind("strftime_now", Params{"format"});
  if (!p[0] || !p[0]->is_string()) throw EvalError("strftime_now needs a format string");
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string buf(256, '\0');
  const size_t n = std::strftime(buf.data(), buf.size(), p[0]->as_string().c_str(), &local);
  buf.resize(n);
  return Value(std::move(buf));
}

// joiner(sep): a callable returning "" the first time and sep afterwards.
struct Joiner : Callable {
  std::string separator;
  mutable bool used = false;
  explicit Joiner(std::string sep) : separator(std::move(sep)) { name = "joiner"; }
  Value call(Interpreter&, CallArgs&) const override {
    if (!used) {
      used = true;
      return Value(std::string());
    }
    return Value(separator);
  }
};

Value joiner_fn(CallArgs& a) {
  auto p = a.bind("joiner", Params{"sep"});
  std::string sep = ", ";
  if (p[0]) {
    if (!p[0]->is_string()) throw EvalError("joiner separator must be a string");
    sep = p[0]->as_string();
  }
  return Value(std::shared_ptr<const Callable>(std::make_shared<Joiner>(std::move(sep))));
}

}  // namespace

Value find_global(std::string_view name) {
  static const Value range = make_function("range", range_fn);
  static const Value ns = make_function("namespace", namespace_fn);
  static const Value dict = make_function("dict", dict_fn);
  static const Value raise = make_function("raise_exception", raise_exception_fn);
  static const Value strftime = make_function("strftime_now", strftime_now_fn);
  static const Value joiner = make_function("joiner", joiner_fn);
  if (name == "range") return range;
  if (name == "namespace") return ns;
  if (name == "dict") return dict;
  if (name == "raise_exception") return raise;
  if (name == "strftime_now") return strftime;
  if (name == "joiner") return joiner;
  return Value();
}

}  // namespace zinfer::chat
