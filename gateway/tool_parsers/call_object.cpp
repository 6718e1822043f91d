#include "gateway/tool_parsers/call_object.h"

#include "gateway/tool_parsers/json_scan.h"

namespace zinfer::gateway::tools {

CallObject read_call_object(std::string_view text, size_t pos, std::initializer_list<std::string_view> argument_keys) {
  CallObject out;
  if (pos >= text.size()) {
    out.status = CallObject::Status::kPartial;  // the object has not begun yet
    return out;
  }
  if (text[pos] != '{') return out;
  const ObjectScan object = scan_object(text, pos);
  if (object.status == ScanStatus::kInvalid) return out;

  const MemberSpan* name = object.find("name");
  if (name && name->value.status == ScanStatus::kComplete) {
    // A name that is not a string makes the call invalid once the object is complete.
    out.has_name = decode_string(text.substr(name->value_begin, name->value.end - name->value_begin), out.call.name);
  }
  const MemberSpan* arguments = nullptr;
  for (std::string_view key : argument_keys) {
    if ((arguments = object.find(key))) break;
  }
  if (arguments) {
    const size_t end = arguments->value.status == ScanStatus::kComplete ? arguments->value.end : text.size();
    out.call.arguments = std::string(text.substr(arguments->value_begin, end - arguments->value_begin));
  }
  if (object.status == ScanStatus::kIncomplete) {
    out.status = CallObject::Status::kPartial;
    return out;
  }
  if (!out.has_name || !arguments || !is_valid_json(text.substr(pos, object.end - pos))) return CallObject{};
  out.status = CallObject::Status::kComplete;
  out.end = object.end;
  return out;
}

}  // namespace zinfer::gateway::tools
