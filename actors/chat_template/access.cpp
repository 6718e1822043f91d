// Attribute, item and slice access, iteration and len() with Jinja's rules: a missing key or
// index is an Undefined (using it fails later), not an immediate error.
#include <algorithm>

#include "actors/chat_template/builtins.h"
#include "actors/chat_template/template_error.h"
#include "actors/text/utf8.h"

namespace zinfer::chat {

std::vector<std::optional<Value>> CallArgs::bind(const std::string& function,
                                                 const std::vector<std::string_view>& params) const {
  if (positional.size() > params.size()) {
    throw EvalError(function + " takes at most " + std::to_string(params.size()) + " positional argument(s), got " +
                    std::to_string(positional.size()));
  }
  std::vector<std::optional<Value>> out(params.size());
  for (size_t i = 0; i < positional.size(); ++i) out[i] = positional[i];
  for (const auto& [key, value] : keyword) {
    const auto it = std::find(params.begin(), params.end(), key);
    if (it == params.end()) throw EvalError(function + " got an unexpected keyword argument '" + key + "'");
    const auto index = static_cast<size_t>(it - params.begin());
    if (out[index]) throw EvalError(function + " got multiple values for argument '" + key + "'");
    out[index] = value;
  }
  return out;
}

void fail_undefined(const Value& undefined) { throw EvalError(undefined.undefined_hint()); }

namespace {

std::string object_name(const Value& v) {
  std::string name(1, '\'');
  name += type_name(v);
  name += " object'";
  return name;
}

Value missing_attribute(const Value& object, const std::string& name) {
  return Value::undefined(object_name(object) + " has no attribute '" + name + "'");
}

// Index into a sequence of n elements, Python style; nullopt when out of range.
std::optional<size_t> resolve_index(int64_t index, size_t n) {
  if (index < 0) index += static_cast<int64_t>(n);
  if (index < 0 || index >= static_cast<int64_t>(n)) return std::nullopt;
  return static_cast<size_t>(index);
}

}  // namespace

Value get_attribute(const Value& object, const std::string& name) {
  if (is_integer_text(name)) return get_item(object, Value(static_cast<int64_t>(std::stoll(name))));  // x.0
  switch (object.kind()) {
    case Value::Kind::Dict: {
      // Jinja tries Python's getattr first, so dict methods shadow keys of the same name.
      Value method = find_method(object, name);
      if (!method.is_undefined()) return method;
      if (const Value* v = object.as_dict().find(name)) return *v;
      return missing_attribute(object, name);
    }
    case Value::Kind::Namespace:
      if (const Value* v = object.as_namespace().attributes.find(name)) return *v;
      return missing_attribute(object, name);
    case Value::Kind::String:
    case Value::Kind::List: {
      Value method = find_method(object, name);
      if (!method.is_undefined()) return method;
      return missing_attribute(object, name);
    }
    default: return missing_attribute(object, name);
  }
}

Value get_item(const Value& object, const Value& key) {
  switch (object.kind()) {
    case Value::Kind::List:
      if (key.is_int() || key.is_bool()) {
        const auto& list = object.as_list();
        if (auto i = resolve_index(key.as_int(), list.size())) return list[*i];
        return Value::undefined(object_name(object) + " has no element " + repr(key));
      }
      break;
    case Value::Kind::String:
      if (key.is_int() || key.is_bool()) {
        const auto offs = utf8::offsets(object.as_string());
        if (auto i = resolve_index(key.as_int(), offs.size() - 1))
          return Value(object.as_string().substr(offs[*i], offs[*i + 1] - offs[*i]));
        return Value::undefined(object_name(object) + " has no element " + repr(key));
      }
      break;
    case Value::Kind::Dict:
      if (key.is_string()) {
        if (const Value* v = object.as_dict().find(key.as_string())) return *v;
      }
      break;
    default: break;
  }
  // As Jinja: obj['name'] falls back to the attribute (a method, a namespace attribute).
  if (key.is_string()) return get_attribute(object, key.as_string());
  return Value::undefined(object_name(object) + " has no element " + repr(key));
}

Value get_slice(const Value& object, const Value& start_v, const Value& stop_v, const Value& step_v) {
  if (!object.is_list() && !object.is_string()) throw EvalError(object_name(object) + " is not subscriptable");
  auto optional_int = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) throw EvalError(std::string("slice ") + what + " must be an integer or None");
    return v.as_int();
  };
  const int64_t step = optional_int(step_v, "step").value_or(1);
  if (step == 0) throw EvalError("slice step cannot be zero");
  std::vector<size_t> offs;
  int64_t n;
  if (object.is_string()) {
    offs = utf8::offsets(object.as_string());
    n = static_cast<int64_t>(offs.size()) - 1;
  } else {
    n = static_cast<int64_t>(object.as_list().size());
  }
  // Python's slice.indices(): clamp start/stop into range for the step's direction.
  auto clamp = [&](std::optional<int64_t> v, int64_t default_value) {
    if (!v) return default_value;
    int64_t x = *v;
    if (x < 0) x += n;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t start = clamp(optional_int(start_v, "start"), step > 0 ? 0 : n - 1);
  const int64_t stop = clamp(optional_int(stop_v, "stop"), step > 0 ? n : -1);
  std::vector<int64_t> picked;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) picked.push_back(i);
  if (object.is_string()) {
    std::string out;
    const std::string& s = object.as_string();
    for (int64_t i : picked) out.append(s, offs[static_cast<size_t>(i)], offs[static_cast<size_t>(i) + 1] - offs[static_cast<size_t>(i)]);
    return Value(std::move(out));
  }
  List out;
  out.reserve(picked.size());
  for (int64_t i : picked) out.push_back(object.as_list()[static_cast<size_t>(i)]);
  return object.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
}

List iterate(const Value& iterable) {
  switch (iterable.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return iterable.as_list();
    case Value::Kind::Dict: {
      List keys;
      for (const auto& [key, unused] : iterable.as_dict().entries) keys.emplace_back(key);
      return keys;
    }
    case Value::Kind::String: {
      List chars;
      const std::string& s = iterable.as_string();
      for (size_t pos = 0; pos < s.size();) {
        if (chars.size() >= kMaxTemplateItems) {
          throw EvalError("a string of more than " + std::to_string(kMaxTemplateItems) + " characters is too long to iterate");
        }
        const size_t start = pos;
        utf8::next(s, pos);
        chars.emplace_back(s.substr(start, pos - start));
      }
      return chars;
    }
    default: throw EvalError(object_name(iterable) + " is not iterable");
  }
}

bool is_integer_text(const std::string& s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void check_text_size(size_t size, const char* what) {
  if (size > kMaxTemplateText) {
    throw EvalError(std::string(what) + ": the result would pass " + std::to_string(kMaxTemplateText >> 20) + " MiB");
  }
}

int64_t length_of(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return 0;
    case Value::Kind::String: return static_cast<int64_t>(utf8::length(v.as_string()));
    case Value::Kind::List: return static_cast<int64_t>(v.as_list().size());
    case Value::Kind::Dict: return static_cast<int64_t>(v.as_dict().entries.size());
    default: throw EvalError("object of type '" + type_name(v) + "' has no len()");
  }
}

}  // namespace zinfer::chat
