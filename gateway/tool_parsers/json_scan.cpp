#include "gateway/tool_parsers/json_scan.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace zinfer::gateway::tools {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

ValueScan complete(size_t end) { return {ScanStatus::kComplete, end}; }
ValueScan incomplete(size_t end) { return {ScanStatus::kIncomplete, end}; }
ValueScan invalid(size_t at) { return {ScanStatus::kInvalid, at}; }

ValueScan scan_string(std::string_view s, size_t pos) {
  for (size_t i = pos + 1; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      ++i;  // the escaped character (checked by the final parse)
    } else if (c == '"') {
      return complete(i + 1);
    } else if (c < 0x20) {
      return invalid(i);  // control characters must be escaped
    }
  }
  return incomplete(s.size());
}

ValueScan scan_literal(std::string_view s, size_t pos, std::string_view word) {
  const size_t n = std::min(word.size(), s.size() - pos);
  if (s.substr(pos, n) != word.substr(0, n)) return invalid(pos);
  return n == word.size() ? complete(pos + n) : incomplete(s.size());
}

ValueScan scan_number(std::string_view s, size_t pos) {
  size_t i = pos;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '+' ||
                          s[i] == '.' || s[i] == 'e' || s[i] == 'E')) {
    ++i;
  }
  // A number is only known to end at the first character after it.
  return i == s.size() ? incomplete(i) : complete(i);
}

// Objects and arrays: matching brackets outside strings.
ValueScan scan_nested(std::string_view s, size_t pos) {
  std::string stack;
  for (size_t i = pos; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      ValueScan str = scan_string(s, i);
      if (str.status != ScanStatus::kComplete) return str;
      i = str.end - 1;
    } else if (c == '{' || c == '[') {
      stack.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (stack.empty() || stack.back() != c) return invalid(i);
      stack.pop_back();
      if (stack.empty()) return complete(i + 1);
    }
  }
  return incomplete(s.size());
}

}  // namespace

size_t skip_whitespace(std::string_view text, size_t pos) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  return pos;
}

ValueScan scan_value(std::string_view s, size_t pos) {
  if (pos >= s.size()) return incomplete(s.size());
  const char c = s[pos];
  if (c == '{' || c == '[') return scan_nested(s, pos);
  if (c == '"') return scan_string(s, pos);
  if (c == 't') return scan_literal(s, pos, "true");
  if (c == 'f') return scan_literal(s, pos, "false");
  if (c == 'n') return scan_literal(s, pos, "null");
  if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return scan_number(s, pos);
  return invalid(pos);
}

const MemberSpan* ObjectScan::find(std::string_view key) const {
  for (const auto& m : members)
    if (m.key == key) return &m;
  return nullptr;
}

ObjectScan scan_object(std::string_view s, size_t pos) {
  ObjectScan out;
  auto stop = [&](ScanStatus status, size_t at) {
    out.status = status;
    out.end = at;
    return out;
  };
  size_t i = skip_whitespace(s, pos + 1);
  if (i < s.size() && s[i] == '}') return stop(ScanStatus::kComplete, i + 1);
  while (true) {
    if (i >= s.size()) return stop(ScanStatus::kIncomplete, s.size());
    if (s[i] != '"') return stop(ScanStatus::kInvalid, i);
    ValueScan key = scan_string(s, i);
    if (key.status != ScanStatus::kComplete) return stop(key.status, key.end);
    MemberSpan member;
    if (!decode_string(s.substr(i, key.end - i), member.key)) return stop(ScanStatus::kInvalid, i);
    i = skip_whitespace(s, key.end);
    if (i >= s.size()) return stop(ScanStatus::kIncomplete, s.size());
    if (s[i] != ':') return stop(ScanStatus::kInvalid, i);
    i = skip_whitespace(s, i + 1);
    member.value_begin = i;
    member.value = scan_value(s, i);
    if (member.value.status == ScanStatus::kInvalid) return stop(ScanStatus::kInvalid, member.value.end);
    out.members.push_back(member);
    if (member.value.status == ScanStatus::kIncomplete) return stop(ScanStatus::kIncomplete, s.size());
    i = skip_whitespace(s, member.value.end);
    if (i >= s.size()) return stop(ScanStatus::kIncomplete, s.size());
    if (s[i] == '}') return stop(ScanStatus::kComplete, i + 1);
    if (s[i] != ',') return stop(ScanStatus::kInvalid, i);
    i = skip_whitespace(s, i + 1);
  }
}

ArrayScan scan_array(std::string_view s, size_t pos) {
  ArrayScan out;
  auto stop = [&](ScanStatus status, size_t at) {
    out.status = status;
    out.end = at;
    return out;
  };
  size_t i = skip_whitespace(s, pos + 1);
  if (i < s.size() && s[i] == ']') return stop(ScanStatus::kComplete, i + 1);
  while (true) {
    if (i >= s.size()) return stop(ScanStatus::kIncomplete, s.size());
    ElementSpan element{i, scan_value(s, i)};
    if (element.value.status == ScanStatus::kInvalid) return stop(ScanStatus::kInvalid, element.value.end);
    out.elements.push_back(element);
    if (element.value.status == ScanStatus::kIncomplete) return stop(ScanStatus::kIncomplete, s.size());
    i = skip_whitespace(s, element.value.end);
    if (i >= s.size()) return stop(ScanStatus::kIncomplete, s.size());
    if (s[i] == ']') return stop(ScanStatus::kComplete, i + 1);
    if (s[i] != ',') return stop(ScanStatus::kInvalid, i);
    i = skip_whitespace(s, i + 1);
  }
}

bool decode_string(std::string_view literal, std::string& out) {
  nlohmann::json j = nlohmann::json::parse(literal, nullptr, /*allow_exceptions=*/false);
  if (!j.is_string()) return false;
  out = j.get<std::string>();
  return true;
}

bool is_valid_json(std::string_view text) { return nlohmann::json::accept(text); }

size_t partial_tag_suffix(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace zinfer::gateway::tools
