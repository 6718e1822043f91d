// Jinja's built-in filters (the ones chat templates use), with transformers' tojson.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "actors/chat_template/builtins.h"
#include "actors/chat_template/template_error.h"
#include "actors/text/utf8.h"

namespace zinfer::chat {
namespace {

using Params = std::vector<std::string_view>;

std::optional<std::string> optional_string(const std::optional<Value>& v, const char* what) {
  if (!v || v->is_none() || v->is_undefined()) return std::nullopt;
  if (!v->is_string()) throw EvalError(std::string(what) + " must be a string, not " + type_name(*v));
  return v->as_string();
}

int64_t int_arg(const std::optional<Value>& v, int64_t default_value, const char* what) {
  if (!v || v->is_none()) return default_value;
  if (!v->is_int() && !v->is_bool()) throw EvalError(std::string(what) + " must be an integer, not " + type_name(*v));
  return v->as_int();
}

// An indentation width: Python takes any, but a template has no use for more than a line's worth,
// and a huge one would be allocated before any size check.
int64_t width_arg(const std::optional<Value>& v, int64_t default_value, const char* what) {
  constexpr int64_t kMaxWidth = 4096;
  const int64_t width = int_arg(v, default_value, what);
  if (width > kMaxWidth) throw EvalError(std::string(what) + " " + std::to_string(width) + " is too large for a template");
  return std::max<int64_t>(0, width);
}

// The text a string filter works on: str(value), which is "" for an Undefined (as in Jinja).
std::string text_of(const Value& v) { return to_str(v); }

// Jinja's attribute= paths: "a.b" or "0" walk items then attributes (environment.getitem).
Value attribute_path(const Value& item, const std::string& path) {
  Value current = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (current.is_undefined()) return current;
    current = is_integer_text(part) ? get_item(current, Value(static_cast<int64_t>(std::stoll(part)))) : get_item(current, Value(part));
    if (dot == std::string::npos) return current;
    start = dot + 1;
  }
}

Value f_trim(const Value& v, const CallArgs& a) {
  auto p = a.bind("trim", Params{"chars"});
  return Value(utf8::strip(text_of(v), optional_string(p[0], "trim chars"), true, true));
}

Value f_length(const Value& v, const CallArgs& a) {
  a.bind("length", {});
  return Value(length_of(v));
}

Value f_first(const Value& v, const CallArgs& a) {
  a.bind("first", {});
  List items = iterate(v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value f_last(const Value& v, const CallArgs& a) {
  a.bind("last", {});
  List items = iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value f_join(const Value& v, const CallArgs& a) {
  auto p = a.bind("join", Params{"d", "attribute"});
  const std::string sep = optional_string(p[0], "join separator").value_or("");
  const auto attribute = optional_string(p[1], "join attribute");
  std::string out;
  bool first = true;
  for (const auto& item : iterate(v)) {
    if (!first) out += sep;
    first = false;
    const std::string piece = to_str(attribute ? attribute_path(item, *attribute) : item);
    check_text_size(out.size() + piece.size() + sep.size(), "join");
    out += piece;
  }
  return Value(std::move(out));
}

Value f_upper(const Value& v, const CallArgs& a) {
  a.bind("upper", {});
  return Value(utf8::to_upper(to_str(v)));
}

Value f_lower(const Value& v, const CallArgs& a) {
  a.bind("lower", {});
  return Value(utf8::to_lower(to_str(v)));
}

Value f_replace(const Value& v, const CallArgs& a) {
  auto p = a.bind("replace", Params{"old", "new", "count"});
  const auto old_text = optional_string(p[0], "replace old");
  const auto new_text = optional_string(p[1], "replace new");
  if (!old_text || !new_text) throw EvalError("replace needs the old and the new string");
  return Value(python_replace(to_str(v), *old_text, *new_text, int_arg(p[2], -1, "replace count")));
}

Value f_default(const Value& v, const CallArgs& a) {
  auto p = a.bind("default", Params{"default_value", "boolean"});
  const bool boolean = p[1] && p[1]->truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return p[0] ? *p[0] : Value(std::string());
  return v;
}

Value f_tojson(const Value& v, const CallArgs& a) {
  // transformers replaces Jinja's tojson: json.dumps(x, ensure_ascii=False, indent, separators, sort_keys).
  auto p = a.bind("tojson", Params{"ensure_ascii", "indent", "separators", "sort_keys"});
  if (p[0] && p[0]->truthy()) throw EvalError("unsupported construct: tojson(ensure_ascii=True)");
  std::optional<std::string> indent;
  if (p[1] && !p[1]->is_none()) {
    if (p[1]->is_string()) indent = p[1]->as_string();
    else indent = std::string(static_cast<size_t>(width_arg(p[1], 0, "indent")), ' ');
  }
  std::optional<std::pair<std::string, std::string>> separators;
  if (p[2] && !p[2]->is_none()) {
    if (!p[2]->is_list() || p[2]->as_list().size() != 2 || !p[2]->as_list()[0].is_string() || !p[2]->as_list()[1].is_string())
      throw EvalError("tojson separators must be a pair of strings");
    separators = std::make_pair(p[2]->as_list()[0].as_string(), p[2]->as_list()[1].as_string());
  }
  return Value(python_json_dumps(v, indent, p[3] && p[3]->truthy(), separators));
}

Value f_string(const Value& v, const CallArgs& a) {
  a.bind("string", {});
  return Value(to_str(v));
}

Value f_int(const Value& v, const CallArgs& a) {
  auto p = a.bind("int", Params{"default", "base"});
  const Value fallback = p[0] ? *p[0] : Value(0);
  const int base = static_cast<int>(int_arg(p[1], 10, "base"));
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float()) return Value(static_cast<int64_t>(std::trunc(v.as_float())));
  if (v.is_string()) {
    const std::string s = utf8::strip(v.as_string(), std::nullopt, true, true);
    char* end = nullptr;
    const long long i = std::strtoll(s.c_str(), &end, base);
    if (!s.empty() && *end == '\0') return Value(static_cast<int64_t>(i));
    const double d = std::strtod(s.c_str(), &end);  // int("3.5") fails in Python; Jinja then tries float
    if (!s.empty() && *end == '\0') return Value(static_cast<int64_t>(std::trunc(d)));
  }
  return fallback;
}

Value f_float(const Value& v, const CallArgs& a) {
  auto p = a.bind("float", Params{"default"});
  const Value fallback = p[0] ? *p[0] : Value(0.0);
  if (v.is_number()) return Value(v.as_float());
  if (v.is_string()) {
    const std::string s = utf8::strip(v.as_string(), std::nullopt, true, true);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return Value(d);
  }
  return fallback;
}

Value f_list(const Value& v, const CallArgs& a) {
  a.bind("list", {});
  return Value(iterate(v));
}

Value f_items(const Value& v, const CallArgs& a) {
  a.bind("items", {});
  if (v.is_undefined()) return Value(List{});
  if (!v.is_dict()) throw EvalError("can only get item pairs from a mapping, not " + type_name(v));
  List pairs;
  for (const auto& [key, value] : v.as_dict().entries) pairs.push_back(Value::tuple(List{Value(key), value}));
  return Value(std::move(pairs));
}

// select/reject/selectattr/rejectattr share this: keep items whose (attribute's) test result is `keep`.
Value select_items(const Value& v, const CallArgs& a, bool by_attribute, bool keep, const char* name) {
  size_t next = 0;
  std::optional<std::string> attribute;
  if (by_attribute) {
    if (a.positional.empty()) throw EvalError(std::string(name) + " needs an attribute name");
    attribute = optional_string(a.positional[0], "attribute name");
    next = 1;
  }
  TestFn test = nullptr;
  CallArgs test_args;
  if (next < a.positional.size()) {
    const Value& test_name = a.positional[next];
    if (!test_name.is_string()) throw EvalError(std::string(name) + " test name must be a string");
    test = find_test(test_name.as_string());
    if (!test) throw EvalError("unknown test '" + test_name.as_string() + "'");
    test_args.positional.assign(a.positional.begin() + static_cast<long>(next) + 1, a.positional.end());
    test_args.keyword = a.keyword;
  } else if (!a.keyword.empty()) {
    throw EvalError(std::string(name) + " got an unexpected keyword argument '" + a.keyword[0].first + "'");
  }
  List out;
  for (const auto& item : iterate(v)) {
    const Value subject = attribute ? attribute_path(item, *attribute) : item;
    const bool passed = test ? test(subject, test_args) : subject.truthy();
    if (passed == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

Value f_selectattr(const Value& v, const CallArgs& a) { return select_items(v, a, true, true, "selectattr"); }
Value f_rejectattr(const Value& v, const CallArgs& a) { return select_items(v, a, true, false, "rejectattr"); }
Value f_select(const Value& v, const CallArgs& a) { return select_items(v, a, false, true, "select"); }
Value f_reject(const Value& v, const CallArgs& a) { return select_items(v, a, false, false, "reject"); }

Value f_map(const Value& v, const CallArgs& a) {
  List out;
  const auto attr_it = std::find_if(a.keyword.begin(), a.keyword.end(), [](const auto& kw) { return kw.first == "attribute"; });
  if (attr_it != a.keyword.end()) {
    auto p = a.bind("map", Params{"attribute", "default"});
    const std::string attribute = optional_string(p[0], "map attribute").value_or("");
    for (const auto& item : iterate(v)) {
      Value mapped = attribute_path(item, attribute);
      if (mapped.is_undefined() && p[1]) mapped = *p[1];
      out.push_back(std::move(mapped));
    }
    return Value(std::move(out));
  }
  if (a.positional.empty() || !a.positional[0].is_string()) throw EvalError("map needs a filter name or attribute=");
  const FilterFn filter = find_filter(a.positional[0].as_string());
  if (!filter) throw EvalError("unknown filter '" + a.positional[0].as_string() + "'");
  CallArgs filter_args;
  filter_args.positional.assign(a.positional.begin() + 1, a.positional.end());
  filter_args.keyword = a.keyword;
  for (const auto& item : iterate(v)) out.push_back(filter(item, filter_args));
  return Value(std::move(out));
}

Value f_reverse(const Value& v, const CallArgs& a) {
  a.bind("reverse", {});
  List items = iterate(v);
  std::reverse(items.begin(), items.end());
  if (!v.is_string()) return Value(std::move(items));
  std::string out;
  for (const auto& c : items) out += c.as_string();
  return Value(std::move(out));
}

Value f_capitalize(const Value& v, const CallArgs& a) {
  a.bind("capitalize", {});
  const std::string s = to_str(v);
  std::string out;
  bool first = true;
  for (size_t pos = 0; pos < s.size(); first = false) {
    const char32_t cp = utf8::next(s, pos);
    utf8::append(out, first ? utf8::to_title(cp) : utf8::to_lower(cp));
  }
  return Value(std::move(out));
}

Value f_title(const Value& v, const CallArgs& a) {
  // Jinja's title: words start after '-', whitespace or an opening bracket; each word's first
  // character is upper-cased and the rest lower-cased.
  a.bind("title", {});
  const std::string s = to_str(v);
  std::string out;
  bool word_start = true;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t cp = utf8::next(s, pos);
    const bool separator = cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || utf8::is_space(cp);
    if (separator) {
      utf8::append(out, cp);
      word_start = true;
    } else {
      utf8::append(out, word_start ? utf8::to_upper(cp) : utf8::to_lower(cp));
      word_start = false;
    }
  }
  return Value(std::move(out));
}

Value f_safe(const Value& v, const CallArgs& a) {
  a.bind("safe", {});
  return Value(to_str(v));  // Markup(value): the text, with no autoescaping to switch off
}

Value f_escape(const Value& v, const CallArgs& a) {
  a.bind("escape", {});
  std::string out;
  for (char c : to_str(v)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return Value(std::move(out));
}

Value f_abs(const Value& v, const CallArgs& a) {
  a.bind("abs", {});
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_number()) return Value(static_cast<int64_t>(std::llabs(v.as_int())));
  throw EvalError("bad operand type for abs(): '" + type_name(v) + "'");
}

Value f_round(const Value& v, const CallArgs& a) {
  auto p = a.bind("round", Params{"precision", "method"});
  if (!v.is_number()) throw EvalError("round needs a number, not " + type_name(v));
  const int64_t precision = int_arg(p[0], 0, "precision");
  const std::string method = optional_string(p[1], "round method").value_or("common");
  if (method == "common" && (v.is_int() || v.is_bool())) return Value(v.as_int());  // Python's round(int) is the int
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = v.as_float() * scale;
  double r;
  if (method == "common") r = std::nearbyint(x);  // Python's round(): halves go to the even neighbour
  else if (method == "ceil") r = std::ceil(x);
  else if (method == "floor") r = std::floor(x);
  else throw EvalError("round method must be 'common', 'ceil' or 'floor'");
  return Value(r / scale);
}

Value sorted_items(const Value& v, const std::optional<std::string>& attribute, bool reverse, bool case_sensitive) {
  List items = iterate(v);
  auto key = [&](const Value& item) {
    Value k = attribute ? attribute_path(item, *attribute) : item;
    if (!case_sensitive && k.is_string()) return Value(utf8::to_lower(k.as_string()));
    return k;
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return reverse ? compare(key(y), key(x)) < 0 : compare(key(x), key(y)) < 0;
  });
  return Value(std::move(items));
}

Value f_sort(const Value& v, const CallArgs& a) {
  auto p = a.bind("sort", Params{"reverse", "case_sensitive", "attribute"});
  return sorted_items(v, optional_string(p[2], "sort attribute"), p[0] && p[0]->truthy(), p[1] && p[1]->truthy());
}

Value f_unique(const Value& v, const CallArgs& a) {
  auto p = a.bind("unique", Params{"case_sensitive", "attribute"});
  const bool case_sensitive = p[0] && p[0]->truthy();
  const auto attribute = optional_string(p[1], "unique attribute");
  List out, seen;
  for (const auto& item : iterate(v)) {
    Value k = attribute ? attribute_path(item, *attribute) : item;
    if (!case_sensitive && k.is_string()) k = Value(utf8::to_lower(k.as_string()));
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); })) {
      seen.push_back(k);
      out.push_back(item);
    }
  }
  return Value(std::move(out));
}

Value extreme(const Value& v, const CallArgs& a, bool want_max, const char* name) {
  auto p = a.bind(name, Params{"case_sensitive", "attribute"});
  const Value sorted = sorted_items(v, optional_string(p[1], "attribute"), want_max, p[0] && p[0]->truthy());
  if (sorted.as_list().empty()) return Value::undefined(std::string("No ") + name + " item, sequence was empty.");
  return sorted.as_list().front();
}

Value f_min(const Value& v, const CallArgs& a) { return extreme(v, a, false, "min"); }
Value f_max(const Value& v, const CallArgs& a) { return extreme(v, a, true, "max"); }

Value f_sum(const Value& v, const CallArgs& a) {
  auto p = a.bind("sum", Params{"attribute", "start"});
  const auto attribute = optional_string(p[0], "sum attribute");
  Value total = p[1] ? *p[1] : Value(0);
  for (const auto& item : iterate(v)) {
    const Value x = attribute ? attribute_path(item, *attribute) : item;
    if (!x.is_number() || !total.is_number()) throw EvalError("sum needs numbers, got " + type_name(x));
    total = total.is_float() || x.is_float() ? Value(total.as_float() + x.as_float()) : Value(total.as_int() + x.as_int());
  }
  return total;
}

Value f_dictsort(const Value& v, const CallArgs& a) {
  auto p = a.bind("dictsort", Params{"case_sensitive", "by", "reverse"});
  const std::string by = optional_string(p[1], "dictsort by").value_or("key");
  if (by != "key" && by != "value") throw EvalError("dictsort by must be 'key' or 'value'");
  return sorted_items(f_items(v, CallArgs{}), by == "key" ? "0" : "1", p[2] && p[2]->truthy(), p[0] && p[0]->truthy());
}

Value f_indent(const Value& v, const CallArgs& a) {
  auto p = a.bind("indent", Params{"width", "first", "blank"});
  std::string pad;
  if (p[0] && p[0]->is_string()) pad = p[0]->as_string();
  else pad = std::string(static_cast<size_t>(width_arg(p[0], 4, "indent width")), ' ');
  const bool first = p[1] && p[1]->truthy();
  const bool blank = p[2] && p[2]->truthy();
  const std::string s = to_str(v);
  std::string out;
  size_t start = 0;
  bool first_line = true;
  while (true) {
    const size_t nl = s.find('\n', start);
    const std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    const bool indent_this = first_line ? first : (blank || !line.empty());
    if (indent_this) out += pad;
    out += line;
    if (nl == std::string::npos) break;
    out += '\n';
    start = nl + 1;
    first_line = false;
  }
  return Value(std::move(out));
}

Value f_attr(const Value& v, const CallArgs& a) {
  auto p = a.bind("attr", Params{"name"});
  const auto name = optional_string(p[0], "attr name");
  if (!name) throw EvalError("attr needs a name");
  return get_attribute(v, *name);
}

Value f_wordcount(const Value& v, const CallArgs& a) {
  a.bind("wordcount", {});
  const std::string s = to_str(v);
  int64_t words = 0;
  bool in_word = false;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t cp = utf8::next(s, pos);
    const bool word_char = utf8::is_alpha(cp) || utf8::is_digit(cp) || cp == '_';
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value(words);
}

const std::unordered_map<std::string_view, FilterFn>& filters() {
  static const std::unordered_map<std::string_view, FilterFn> table = {
      {"trim", f_trim},         {"length", f_length},         {"count", f_length},       {"first", f_first},
      {"last", f_last},         {"join", f_join},             {"upper", f_upper},        {"lower", f_lower},
      {"replace", f_replace},   {"default", f_default},       {"d", f_default},          {"tojson", f_tojson},
      {"string", f_string},     {"int", f_int},               {"float", f_float},        {"list", f_list},
      {"items", f_items},       {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr},
      {"select", f_select},     {"reject", f_reject},         {"map", f_map},            {"reverse", f_reverse},
      {"capitalize", f_capitalize}, {"title", f_title},       {"safe", f_safe},          {"escape", f_escape},
      {"e", f_escape},          {"abs", f_abs},               {"round", f_round},        {"sort", f_sort},
      {"unique", f_unique},     {"min", f_min},               {"max", f_max},            {"sum", f_sum},
      {"dictsort", f_dictsort}, {"indent", f_indent},         {"attr", f_attr},          {"wordcount", f_wordcount},
  };
  return table;
}

}  // namespace

FilterFn find_filter(std::string_view name) {
  const auto it = filters().find(name);
  return it == filters().end() ? nullptr : it->second;
}

}  // namespace zinfer::chat
