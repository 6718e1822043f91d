// The outputs of forced calls, which the grammar makes JSON (gateway/tool_request.h writes the
// schemas): with a named function the output is its arguments; with tool_choice "required" it
// is a list [{"name": "f", "parameters": {...}}, ...] (vLLM's shape). An output that is not
// complete JSON (cut by max_tokens) is left as content.
#include "gateway/tool_parsers/call_object.h"
#include "gateway/tool_parsers/json_scan.h"
#include "gateway/tool_parsers/tool_parser.h"

namespace zinfer::gateway::tools {
namespace {

ParsedOutput all_content(std::string_view text) {
  ParsedOutput c;
  c.texts.front() = std::string(text);
  return c;
}

class NamedCallParser final : public ToolParser {
 public:
  explicit NamedCallParser(std::string function) : function_(std::move(function)) {}
  std::string_view name() const override { return "named"; }
  bool needs_special_tokens() const override { return false; }

  ParsedOutput parse(std::string_view text, bool final) const override {
    const std::string_view arguments = final ? trim(text) : trim_left(text);
    if (final && !is_valid_json(arguments)) return all_content(text);
    ParsedOutput out;
    out.calls.push_back({function_, std::string(arguments)});
    out.texts.emplace_back();
    return out;
  }

 private:
  std::string function_;
};

class RequiredCallsParser final : public ToolParser {
 public:
  std::string_view name() const override { return "required"; }
  bool needs_special_tokens() const override { return false; }

  ParsedOutput parse(std::string_view text, bool final) const override {
    ParsedOutput out;
    const size_t p = skip_whitespace(text, 0);
    if (p >= text.size()) return final ? all_content(text) : out;
    if (text[p] != '[') return all_content(text);
    const ArrayScan list = scan_array(text, p);
    if (final && (list.status != ScanStatus::kComplete || !trim(text.substr(list.end)).empty())) {
      return all_content(text);
    }
    for (const ElementSpan& element : list.elements) {
      const CallObject call = read_call_object(text, element.begin, {"parameters"});
      if (call.status == CallObject::Status::kComplete ||
          (!final && call.status == CallObject::Status::kPartial && call.has_name)) {
        out.calls.push_back(call.call);
        out.texts.emplace_back();
        continue;
      }
      if (final) return all_content(text);
      break;
    }
    if (final && out.calls.empty()) return all_content(text);
    return out;
  }
};

}  // namespace

std::unique_ptr<ToolParser> named_call_parser(std::string function_name) {
  return std::make_unique<NamedCallParser>(std::move(function_name));
}

std::unique_ptr<ToolParser> required_calls_parser() { return std::make_unique<RequiredCallsParser>(); }

}  // namespace zinfer::gateway::tools
