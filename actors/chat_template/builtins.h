// What a template can reach besides its own variables: filters (x | f), tests (x is t), methods
// of str/dict/list (x.strip()), global functions (range, namespace, raise_exception, ...), and
// attribute/item access with Jinja's rules. Each family lives in its own .cpp file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/chat_template/value.h"

namespace zinfer::chat {

// The evaluated arguments of a call.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // Binds the arguments to `params` as Python does (positional first, then by name). A missing
  // argument is nullopt; an extra or unknown one is an EvalError naming `function`.
  std::vector<std::optional<Value>> bind(const std::string& function, const std::vector<std::string_view>& params) const;
};

// Filters and tests receive their operand and the arguments after it.
using FilterFn = Value (*)(const Value& operand, const CallArgs& args);
using TestFn = bool (*)(const Value& operand, const CallArgs& args);
FilterFn find_filter(std::string_view name);  // nullptr when there is no such filter
TestFn find_test(std::string_view name);      // nullptr when there is no such test

// obj.name: a dict's method, else its key; a str/list method; a namespace attribute. Undefined
// when absent (using an Undefined is what fails, as in Jinja).
Value get_attribute(const Value& object, const std::string& name);
// obj[key]: list/str index (negative from the end), dict key, falling back to the attribute.
Value get_item(const Value& object, const Value& key);
// obj[start:stop:step] on a list or str; absent parts are None or Undefined.
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step);
// Items a `for` loop visits: a list's items, a dict's keys, a str's characters; Undefined is empty.
List iterate(const Value& iterable);
// Python len(); EvalError for a value without one.
int64_t length_of(const Value& v);
// Reports that an Undefined was used where a value is needed.
[[noreturn]] void fail_undefined(const Value& undefined);

// A bound method of a str, dict or list, or an Undefined (without a hint: the caller words the
// error) when `self` has no method `name`.
Value find_method(const Value& self, const std::string& name);

// The largest string and list a template may make (Interpreter checks every value against them);
// a builtin whose result can be far larger than its inputs (join, replace, a string's
// characters) checks as it builds, so that no single call exhausts memory first.
inline constexpr size_t kMaxTemplateText = size_t{16} << 20;
inline constexpr size_t kMaxTemplateItems = size_t{1} << 20;
// Throws EvalError when a result of `size` bytes passes kMaxTemplateText.
void check_text_size(size_t size, const char* what);

// Whether `s` is digits only, few enough for an int64: a name or path part that indexes (x.0,
// attribute="0"); a longer run of digits names no element anyway.
bool is_integer_text(const std::string& s);

// Python str.replace(old, new, count): count < 0 replaces all; an empty `old` inserts between characters.
std::string python_replace(const std::string& s, const std::string& old_text, const std::string& new_text, int64_t count);

// A global function (range, namespace, dict, raise_exception, strftime_now, joiner), or Undefined.
Value find_global(std::string_view name);

// Python json.dumps(value, ensure_ascii=False, indent=indent, separators=..., sort_keys=...),
// which is how transformers' tojson filter writes JSON.
std::string python_json_dumps(const Value& value, std::optional<std::string> indent, bool sort_keys,
                              std::optional<std::pair<std::string, std::string>> separators = std::nullopt);

}  // namespace zinfer::chat
