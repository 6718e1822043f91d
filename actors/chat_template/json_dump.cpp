// Python's json.dumps(..., ensure_ascii=False), byte for byte: the separators and indentation
// Python uses, its float repr, and its string escapes (only '"', '\\' and control characters).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "actors/chat_template/builtins.h"
#include "actors/chat_template/template_error.h"

namespace zinfer::chat {
namespace {

void dump_string(const std::string& s, std::string& out) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

struct Dumper {
  std::optional<std::string> indent;
  bool sort_keys;
  std::string item_separator, key_separator;

  void newline(std::string& out, int level) const {
    out += '\n';
    for (int i = 0; i < level; ++i) out += *indent;
  }

  void dump(const Value& v, std::string& out, int level) const {
    switch (v.kind()) {
      case Value::Kind::None: out += "null"; return;
      case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::Int: out += std::to_string(v.as_int()); return;
      case Value::Kind::Float: {
        const double d = v.as_float();
        if (std::isnan(d)) out += "NaN";
        else if (std::isinf(d)) out += d > 0 ? "Infinity" : "-Infinity";
        else out += format_float(d);
        return;
      }
      case Value::Kind::String: dump_string(v.as_string(), out); return;
      case Value::Kind::List: {
        const auto& list = v.as_list();
        if (list.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (size_t i = 0; i < list.size(); ++i) {
          if (i > 0) out += item_separator;
          if (indent) newline(out, level + 1);
          dump(list[i], out, level + 1);
        }
        if (indent) newline(out, level);
        out += ']';
        return;
      }
      case Value::Kind::Dict: {
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& entry : v.as_dict().entries) entries.push_back(&entry);
        if (entries.empty()) {
          out += "{}";
          return;
        }
        if (sort_keys) std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i > 0) out += item_separator;
          if (indent) newline(out, level + 1);
          dump_string(entries[i]->first, out);
          out += key_separator;
          dump(entries[i]->second, out, level + 1);
        }
        if (indent) newline(out, level);
        out += '}';
        return;
      }
      default: throw EvalError("Object of type " + type_name(v) + " is not JSON serializable");
    }
  }
};

}  // namespace

std::string python_json_dumps(const Value& value, std::optional<std::string> indent, bool sort_keys,
                              std::optional<std::pair<std::string, std::string>> separators) {
  Dumper dumper{std::move(indent), sort_keys, ", ", ": "};
  if (dumper.indent) dumper.item_separator = ",";  // Python drops the space after ',' when indenting
  if (separators) std::tie(dumper.item_separator, dumper.key_separator) = *separators;
  std::string out;
  dumper.dump(value, out, 0);
  return out;
}

}  // namespace zinfer::chat
