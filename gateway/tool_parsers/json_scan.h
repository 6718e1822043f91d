// Finding where JSON values begin and end in text that may stop in the middle of one: the tool
// parsers read a model's output while it streams, so they must tell "not finished yet" from
// "not JSON". The scanner checks structure (brackets, strings, literals), not every detail of a
// value's grammar: a value it calls complete is parsed with nlohmann::json before it is trusted.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::gateway::tools {

enum class ScanStatus {
  kComplete,    // the value ends at `end`
  kIncomplete,  // the text ends inside the value (it may still become valid)
  kInvalid,     // no continuation makes this a JSON value
};

struct ValueScan {
  ScanStatus status = ScanStatus::kInvalid;
  size_t end = 0;  // one past the value (kComplete); where the text stopped or the error is otherwise
};

size_t skip_whitespace(std::string_view text, size_t pos);

// The JSON value starting exactly at `pos` (no whitespace skipped).
ValueScan scan_value(std::string_view text, size_t pos);

// One member of an object, as positions in the text.
struct MemberSpan {
  std::string key;
  size_t value_begin = 0;
  ValueScan value;
};

// The object starting at `pos` (text[pos] == '{'), member by member: for an incomplete object, the
// members whose key is complete, the last one possibly with an incomplete value.
struct ObjectScan {
  ScanStatus status = ScanStatus::kInvalid;
  size_t end = 0;
  std::vector<MemberSpan> members;
  const MemberSpan* find(std::string_view key) const;
};
ObjectScan scan_object(std::string_view text, size_t pos);

// The array starting at `pos` (text[pos] == '['): its elements' beginnings and scans.
struct ElementSpan {
  size_t begin = 0;
  ValueScan value;
};
struct ArrayScan {
  ScanStatus status = ScanStatus::kInvalid;
  size_t end = 0;
  std::vector<ElementSpan> elements;
};
ArrayScan scan_array(std::string_view text, size_t pos);

// The string a complete JSON string literal holds; false when the literal is not valid JSON.
bool decode_string(std::string_view literal, std::string& out);

// Whether a complete value's text parses as JSON.
bool is_valid_json(std::string_view text);

// The length of the longest suffix of `text` that is a proper prefix of `tag` (a tag that may be
// arriving in pieces: a stream holds that much text back).
size_t partial_tag_suffix(std::string_view text, std::string_view tag);

}  // namespace zinfer::gateway::tools
