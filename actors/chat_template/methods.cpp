// Python methods of str, dict and list reachable from a template (message.content.strip(),
// messages[0].get('x'), ...). The mutating ones are refused as transformers' immutable sandbox does.
#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "actors/chat_template/builtins.h"
#include "actors/chat_template/template_error.h"
#include "actors/text/utf8.h"

namespace zinfer::chat {
namespace {

using Params = std::vector<std::string_view>;
using MethodFn = Value (*)(const Value& self, const CallArgs& args);

struct BoundMethod : Callable {
  Value self;
  MethodFn fn;
  BoundMethod(Value s, MethodFn f, std::string method_name) : self(std::move(s)), fn(f) { name = std::move(method_name); }
  Value call(Interpreter&, CallArgs& args) const override {
    try {
      return fn(self, args);
    } catch (const EvalError& e) {
      throw EvalError(name + "(): " + e.what());
    }
  }
};

struct UnsafeMethod : Callable {
  std::string type;
  UnsafeMethod(std::string t, std::string method_name) : type(std::move(t)) { name = std::move(method_name); }
  Value call(Interpreter&, CallArgs&) const override {
    throw EvalError("access to attribute '" + name + "' of '" + type + "' object is unsafe (templates cannot modify values)");
  }
};

std::optional<std::string> opt_str(const std::optional<Value>& v, const char* what) {
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) throw EvalError(std::string(what) + " must be a str, not " + type_name(*v));
  return v->as_string();
}

const std::string& str_arg(const std::optional<Value>& v, const char* what) {
  if (!v || !v->is_string()) throw EvalError(std::string(what) + " must be a str");
  return v->as_string();
}

int64_t int_arg(const std::optional<Value>& v, int64_t default_value, const char* what) {
  if (!v || v->is_none()) return default_value;
  if (!v->is_int() && !v->is_bool()) throw EvalError(std::string(what) + " must be an int, not " + type_name(*v));
  return v->as_int();
}

// ---- str ----

Value s_strip(const Value& self, const CallArgs& a) {
  return Value(utf8::strip(self.as_string(), opt_str(a.bind("strip", Params{"chars"})[0], "chars"), true, true));
}
Value s_lstrip(const Value& self, const CallArgs& a) {
  return Value(utf8::strip(self.as_string(), opt_str(a.bind("lstrip", Params{"chars"})[0], "chars"), true, false));
}
Value s_rstrip(const Value& self, const CallArgs& a) {
  return Value(utf8::strip(self.as_string(), opt_str(a.bind("rstrip", Params{"chars"})[0], "chars"), false, true));
}

Value s_split(const Value& self, const CallArgs& a) {
  auto p = a.bind("split", Params{"sep", "maxsplit"});
  const auto sep = opt_str(p[0], "sep");
  int64_t maxsplit = int_arg(p[1], -1, "maxsplit");
  const std::string& s = self.as_string();
  List parts;
  if (sep) {
    if (sep->empty()) throw EvalError("empty separator");
    size_t start = 0;
    while (maxsplit != 0) {
      const size_t at = s.find(*sep, start);
      if (at == std::string::npos) break;
      parts.emplace_back(s.substr(start, at - start));
      start = at + sep->size();
      --maxsplit;
    }
    parts.emplace_back(s.substr(start));
    return Value(std::move(parts));
  }
  // No separator: runs of whitespace separate, and leading/trailing whitespace yields no parts.
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < s.size()) {
      size_t next = pos;
      if (!utf8::is_space(utf8::next(s, next))) break;
      pos = next;
    }
  };
  while (true) {
    skip_space();
    if (pos >= s.size()) break;
    if (maxsplit == 0) {
      parts.emplace_back(s.substr(pos));  // the rest, trailing whitespace included, as Python does
      break;
    }
    const size_t start = pos;
    while (pos < s.size()) {
      size_t next = pos;
      if (utf8::is_space(utf8::next(s, next))) break;
      pos = next;
    }
    parts.emplace_back(s.substr(start, pos - start));
    --maxsplit;
  }
  return Value(std::move(parts));
}

Value s_splitlines(const Value& self, const CallArgs& a) {
  const bool keepends = [&] { auto p = a.bind("splitlines", Params{"keepends"}); return p[0] && p[0]->truthy(); }();
  const std::string& s = self.as_string();
  List lines;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    if (s[i] == '\n' || s[i] == '\r') {
      const size_t end_len = (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
      lines.emplace_back(s.substr(start, i - start + (keepends ? end_len : 0)));
      i += end_len;
      start = i;
    } else {
      ++i;
    }
  }
  if (start < s.size()) lines.emplace_back(s.substr(start));
  return Value(std::move(lines));
}

// startswith/endswith accept one str or a tuple (list) of them.
bool affix_matches(const Value& self, const CallArgs& a, const char* name, bool prefix) {
  auto p = a.bind(name, Params{"affix"});
  if (!p[0]) throw EvalError(std::string(name) + " needs an argument");
  std::vector<std::string> options;
  if (p[0]->is_string()) {
    options.push_back(p[0]->as_string());
  } else if (p[0]->is_list()) {
    for (const auto& item : p[0]->as_list()) {
      if (!item.is_string()) throw EvalError(std::string(name) + " tuple items must be str");
      options.push_back(item.as_string());
    }
  } else {
    throw EvalError(std::string(name) + " argument must be str or a tuple of str, not " + type_name(*p[0]));
  }
  const std::string& s = self.as_string();
  for (const auto& o : options) {
    if (o.size() > s.size()) continue;
    if (prefix ? s.compare(0, o.size(), o) == 0 : s.compare(s.size() - o.size(), o.size(), o) == 0) return true;
  }
  return false;
}
Value s_startswith(const Value& self, const CallArgs& a) { return Value(affix_matches(self, a, "startswith", true)); }
Value s_endswith(const Value& self, const CallArgs& a) { return Value(affix_matches(self, a, "endswith", false)); }

Value s_replace(const Value& self, const CallArgs& a) {
  auto p = a.bind("replace", Params{"old", "new", "count"});
  return Value(python_replace(self.as_string(), str_arg(p[0], "old"), str_arg(p[1], "new"), int_arg(p[2], -1, "count")));
}

Value s_upper(const Value& self, const CallArgs& a) { a.bind("upper", {}); return Value(utf8::to_upper(self.as_string())); }
Value s_lower(const Value& self, const CallArgs& a) { a.bind("lower", {}); return Value(utf8::to_lower(self.as_string())); }

Value s_title(const Value& self, const CallArgs& a) {
  // Python str.title: a letter after a non-letter starts a word (title case), others go lower.
  a.bind("title", {});
  const std::string& s = self.as_string();
  std::string out;
  bool previous_cased = false;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t cp = utf8::next(s, pos);
    const bool cased = utf8::is_alpha(cp);
    utf8::append(out, cased ? (previous_cased ? utf8::to_lower(cp) : utf8::to_title(cp)) : cp);
    previous_cased = cased;
  }
  return Value(std::move(out));
}

Value s_capitalize(const Value& self, const CallArgs& a) {
  a.bind("capitalize", {});
  const std::string& s = self.as_string();
  std::string out;
  for (size_t pos = 0; pos < s.size();) {
    const bool first = pos == 0;
    const char32_t cp = utf8::next(s, pos);
    utf8::append(out, first ? utf8::to_title(cp) : utf8::to_lower(cp));
  }
  return Value(std::move(out));
}

// find/rfind/index/count return code point positions, as Python's str does.
int64_t find_in(const Value& self, const CallArgs& a, const char* name, bool reverse) {
  auto p = a.bind(name, Params{"sub", "start"});
  const std::string& sub = str_arg(p[0], "sub");
  const std::string& s = self.as_string();
  const auto offs = utf8::offsets(s);
  int64_t start = int_arg(p[1], 0, "start");
  const auto n = static_cast<int64_t>(offs.size()) - 1;
  if (start < 0) start = std::max<int64_t>(0, start + n);
  if (start > n) return -1;
  const size_t from = offs[static_cast<size_t>(start)];
  size_t at = reverse ? s.rfind(sub) : s.find(sub, from);
  if (at == std::string::npos || at < from) return -1;
  return static_cast<int64_t>(utf8::length(std::string_view(s).substr(0, at)));
}
Value s_find(const Value& self, const CallArgs& a) { return Value(find_in(self, a, "find", false)); }
Value s_rfind(const Value& self, const CallArgs& a) { return Value(find_in(self, a, "rfind", true)); }
Value s_index(const Value& self, const CallArgs& a) {
  const int64_t at = find_in(self, a, "index", false);
  if (at < 0) throw EvalError("substring not found");
  return Value(at);
}

Value s_count(const Value& self, const CallArgs& a) {
  auto p = a.bind("count", Params{"sub"});
  const std::string& sub = str_arg(p[0], "sub");
  const std::string& s = self.as_string();
  if (sub.empty()) return Value(static_cast<int64_t>(utf8::length(s)) + 1);
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
  return Value(n);
}

Value s_join(const Value& self, const CallArgs& a) {
  auto p = a.bind("join", Params{"iterable"});
  if (!p[0]) throw EvalError("join needs an iterable");
  std::string out;
  bool first = true;
  for (const auto& item : iterate(*p[0])) {
    if (!item.is_string()) throw EvalError("sequence item: expected str instance, " + type_name(item) + " found");
    if (!first) out += self.as_string();
    first = false;
    check_text_size(out.size() + item.as_string().size() + self.as_string().size(), "join");
    out += item.as_string();
  }
  return Value(std::move(out));
}

// str.format with {} / {0} / {name} fields and {{ }} escapes; format specs are not supported.
Value s_format(const Value& self, const CallArgs& a) {
  const std::string& s = self.as_string();
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '}' ) {
      if (i + 1 < s.size() && s[i + 1] == '}') ++i;
      else throw EvalError("single '}' encountered in format string");
      out += '}';
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = s.find('}', i);
    if (close == std::string::npos) throw EvalError("single '{' encountered in format string");
    const std::string field = s.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos) throw EvalError("unsupported construct: format field '{" + field + "}'");
    const Value* value = nullptr;
    if (field.empty() || std::isdigit(static_cast<unsigned char>(field[0]))) {
      // A field of digits only (Python's rule; std::stoul alone would take "0x" and throw on
      // a number past size_t).
      if (field.size() > 9 || field.find_first_not_of("0123456789") != std::string::npos) {
        throw EvalError("unsupported construct: format field '{" + field + "}'");
      }
      const size_t index = field.empty() ? auto_index++ : std::stoul(field);
      if (index >= a.positional.size()) throw EvalError("format index " + std::to_string(index) + " out of range");
      value = &a.positional[index];
    } else {
      for (const auto& [key, v] : a.keyword)
        if (key == field) value = &v;
      if (!value) throw EvalError("format has no argument named '" + field + "'");
    }
    const std::string text = to_str(*value);
    check_text_size(out.size() + text.size(), "format");
    out += text;
    i = close;
  }
  return Value(std::move(out));
}

template <bool (*Pred)(char32_t)>
Value all_chars(const Value& self, const CallArgs& a) {
  a.bind("is*", {});
  const std::string& s = self.as_string();
  if (s.empty()) return Value(false);
  for (size_t pos = 0; pos < s.size();)
    if (!Pred(utf8::next(s, pos))) return Value(false);
  return Value(true);
}
bool is_alnum(char32_t cp) { return utf8::is_alpha(cp) || utf8::is_digit(cp); }

Value s_removeprefix(const Value& self, const CallArgs& a) {
  const std::string& affix = str_arg(a.bind("removeprefix", Params{"prefix"})[0], "prefix");
  const std::string& s = self.as_string();
  return Value(s.compare(0, affix.size(), affix) == 0 ? s.substr(affix.size()) : s);
}
Value s_removesuffix(const Value& self, const CallArgs& a) {
  const std::string& affix = str_arg(a.bind("removesuffix", Params{"suffix"})[0], "suffix");
  const std::string& s = self.as_string();
  if (!affix.empty() && affix.size() <= s.size() && s.compare(s.size() - affix.size(), affix.size(), affix) == 0)
    return Value(s.substr(0, s.size() - affix.size()));
  return Value(s);
}

// ---- dict ----

Value d_items(const Value& self, const CallArgs& a) {
  a.bind("items", {});
  List pairs;
  for (const auto& [key, value] : self.as_dict().entries) pairs.push_back(Value::tuple(List{Value(key), value}));
  return Value(std::move(pairs));
}
Value d_keys(const Value& self, const CallArgs& a) {
  a.bind("keys", {});
  List keys;
  for (const auto& [key, unused] : self.as_dict().entries) keys.emplace_back(key);
  return Value(std::move(keys));
}
Value d_values(const Value& self, const CallArgs& a) {
  a.bind("values", {});
  List values;
  for (const auto& [unused, value] : self.as_dict().entries) values.push_back(value);
  return Value(std::move(values));
}
Value d_get(const Value& self, const CallArgs& a) {
  auto p = a.bind("get", Params{"key", "default"});
  if (!p[0]) throw EvalError("get needs a key");
  if (p[0]->is_string())
    if (const Value* v = self.as_dict().find(p[0]->as_string())) return *v;
  return p[1] ? *p[1] : Value::none();
}
Value copy_self(const Value& self, const CallArgs& a) {
  a.bind("copy", {});
  return self;  // values are immutable, so sharing is copying
}

// ---- list ----

Value l_index(const Value& self, const CallArgs& a) {
  auto p = a.bind("index", Params{"value"});
  const auto& list = self.as_list();
  for (size_t i = 0; i < list.size(); ++i)
    if (p[0] && equals(list[i], *p[0])) return Value(static_cast<int64_t>(i));
  throw EvalError("value is not in list");
}
Value l_count(const Value& self, const CallArgs& a) {
  auto p = a.bind("count", Params{"value"});
  int64_t n = 0;
  for (const auto& item : self.as_list())
    if (p[0] && equals(item, *p[0])) ++n;
  return Value(n);
}

const std::unordered_map<std::string_view, MethodFn>& str_methods() {
  static const std::unordered_map<std::string_view, MethodFn> table = {
      {"strip", s_strip},           {"lstrip", s_lstrip},         {"rstrip", s_rstrip},
      {"split", s_split},           {"splitlines", s_splitlines}, {"startswith", s_startswith},
      {"endswith", s_endswith},     {"replace", s_replace},       {"upper", s_upper},
      {"lower", s_lower},           {"title", s_title},           {"capitalize", s_capitalize},
      {"find", s_find},             {"rfind", s_rfind},           {"index", s_index},
      {"count", s_count},           {"join", s_join},             {"format", s_format},
      {"isdigit", all_chars<utf8::is_digit>}, {"isalpha", all_chars<utf8::is_alpha>},
      {"isspace", all_chars<utf8::is_space>}, {"isalnum", all_chars<is_alnum>},
      {"removeprefix", s_removeprefix}, {"removesuffix", s_removesuffix},
  };
  return table;
}
const std::unordered_map<std::string_view, MethodFn>& dict_methods() {
  static const std::unordered_map<std::string_view, MethodFn> table = {
      {"items", d_items}, {"keys", d_keys}, {"values", d_values}, {"get", d_get}, {"copy", copy_self}};
  return table;
}
const std::unordered_map<std::string_view, MethodFn>& list_methods() {
  static const std::unordered_map<std::string_view, MethodFn> table = {
      {"index", l_index}, {"count", l_count}, {"copy", copy_self}};
  return table;
}

bool is_mutating(const Value& self, std::string_view name) {
  static const std::vector<std::string_view> dict_names = {"pop", "popitem", "setdefault", "update", "clear"};
  static const std::vector<std::string_view> list_names = {"append", "extend", "insert", "pop", "remove",
                                                           "reverse", "sort", "clear"};
  const auto& names = self.is_dict() ? dict_names : list_names;
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string python_replace(const std::string& s, const std::string& old_text, const std::string& new_text, int64_t count) {
  std::string out;
  if (old_text.empty()) {  // inserts `new` before every character and at the end
    size_t pos = 0;
    while (pos < s.size()) {
      check_text_size(out.size() + new_text.size() + 4, "replace");
      if (count-- != 0) out += new_text;
      const size_t start = pos;
      utf8::next(s, pos);
      out.append(s, start, pos - start);
    }
    if (count != 0) out += new_text;
    return out;
  }
  size_t start = 0;
  while (count != 0) {
    const size_t at = s.find(old_text, start);
    if (at == std::string::npos) break;
    check_text_size(out.size() + (at - start) + new_text.size(), "replace");
    out.append(s, start, at - start);
    out += new_text;
    start = at + old_text.size();
    --count;
  }
  out.append(s, start, std::string::npos);
  return out;
}

Value find_method(const Value& self, const std::string& name) {
  const std::unordered_map<std::string_view, MethodFn>* table = nullptr;
  if (self.is_string()) table = &str_methods();
  else if (self.is_dict()) table = &dict_methods();
  else if (self.is_list()) table = &list_methods();
  else return Value();
  const auto it = table->find(name);
  if (it != table->end()) return Value(std::shared_ptr<const Callable>(std::make_shared<BoundMethod>(self, it->second, name)));
  if ((self.is_dict() || self.is_list()) && is_mutating(self, name))
    return Value(std::shared_ptr<const Callable>(std::make_shared<UnsafeMethod>(type_name(self), name)));
  return Value();
}

}  // namespace zinfer::chat
