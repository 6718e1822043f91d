// "llama3_json": Llama 3.1 / 3.2 with JSON-based tool calling (their templates ask for it):
//   <|python_tag|>{"name": "f", "parameters": {...}}; {"name": "g", "parameters": {...}}
// The output is either calls (optionally after <|python_tag|>, several separated by ';') or text:
// it is calls only when it starts with the tag or '{' and every object is a call object ("parameters",
// or "arguments" as some fine-tunes write it); otherwise the whole output is content.
#include "gateway/tool_parsers/call_object.h"
#include "gateway/tool_parsers/json_scan.h"
#include "gateway/tool_parsers/parsers.h"

namespace zinfer::gateway::tools {
namespace {

constexpr std::string_view kPythonTag = "<|python_tag|>";

class Llama3JsonParser final : public ToolParser {
 public:
  std::string_view name() const override { return "llama3_json"; }

  ParsedOutput parse(std::string_view text, bool final) const override {
    ParsedOutput out;
    const auto as_content = [&] {
      ParsedOutput c;
      c.texts.front() = std::string(text);
      return c;
    };
    size_t p = skip_whitespace(text, 0);
    if (text.substr(p).starts_with(kPythonTag)) {
      p = skip_whitespace(text, p + kPythonTag.size());
    } else if (!final && kPythonTag.starts_with(text.substr(p))) {
      return out;  // white space, or the tag arriving in pieces
    }
    if (p >= text.size()) return final ? as_content() : out;
    if (text[p] != '{') return as_content();
    // A stream that already reported calls cannot take them back: later malformed parts end the
    // prefix parse (the final parse makes the whole output content).
    const auto malformed = [&] { return final || out.calls.empty() ? as_content() : out; };
    while (true) {
      const CallObject call = read_call_object(text, p, {"parameters", "arguments"});
      if (call.status == CallObject::Status::kInvalid) return malformed();
      if (call.status == CallObject::Status::kPartial) {
        if (final) return as_content();
        if (call.has_name) {
          out.calls.push_back(call.call);
          out.texts.emplace_back();
        }
        return out;
      }
      out.calls.push_back(call.call);
      out.texts.emplace_back();
      const size_t q = skip_whitespace(text, call.end);
      if (q >= text.size()) return out;
      if (text[q] != ';') return malformed();
      p = skip_whitespace(text, q + 1);
      if (p >= text.size()) return out;
      if (text[p] != '{') return malformed();
    }
  }
};

}  // namespace

std::unique_ptr<ToolParser> make_llama3_json_parser() { return std::make_unique<Llama3JsonParser>(); }

}  // namespace zinfer::gateway::tools
