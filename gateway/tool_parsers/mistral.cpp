// "mistral": Mistral 7B Instruct v0.3, Mixtral 8x22B Instruct, Mistral Nemo and their kind:
//   text [TOOL_CALLS] [{"name": "f", "arguments": {...}}, {"name": "g", "arguments": {...}}]
// The text before [TOOL_CALLS] is content; a list that is not a list of call objects leaves the
// whole output as content. [TOOL_CALLS] is a special token of Mistral's tokenizers, so the output
// is detokenized with special tokens kept. Call ids are 9 letters and digits, which Mistral's
// chat templates require of the ids in the history.
#include "gateway/tool_parsers/call_object.h"
#include "gateway/tool_parsers/json_scan.h"
#include "gateway/tool_parsers/parsers.h"

namespace zinfer::gateway::tools {
namespace {

constexpr std::string_view kTag = "[TOOL_CALLS]";

class MistralParser final : public ToolParser {
 public:
  std::string_view name() const override { return "mistral"; }

  std::string call_id() const override { return random_call_id("", 9); }

  ParsedOutput parse(std::string_view text, bool final) const override {
    ParsedOutput out;
    const size_t tag = text.find(kTag);
    if (tag == std::string_view::npos) {
      std::string_view all = text;
      if (!final) all.remove_suffix(partial_tag_suffix(all, kTag));
      out.texts.front() = std::string(all);
      return out;
    }
    const auto as_content = [&] {
      ParsedOutput c;
      c.texts.front() = std::string(text);
      return c;
    };
    out.texts.front() = std::string(text.substr(0, tag));
    const size_t p = skip_whitespace(text, tag + kTag.size());
    if (p >= text.size()) return final ? as_content() : out;
    if (text[p] != '[') return as_content();
    const ArrayScan list = scan_array(text, p);
    if (list.status == ScanStatus::kInvalid && (final || list.elements.empty())) return as_content();
    for (const ElementSpan& element : list.elements) {
      const CallObject call = read_call_object(text, element.begin, {"arguments"});
      if (call.status == CallObject::Status::kComplete ||
          (!final && call.status == CallObject::Status::kPartial && call.has_name)) {
        out.calls.push_back(call.call);
        out.texts.emplace_back();
        continue;
      }
      if (final || (call.status == CallObject::Status::kInvalid && out.calls.empty())) return as_content();
      return out;  // the next call's name is not complete yet
    }
    if (list.status != ScanStatus::kComplete) return final ? as_content() : out;
    // Text after the list is content too (rarely any).
    std::string_view after = text.substr(list.end);
    if (!final) after = trim_right(after);
    out.texts.back() = std::string(after);
    return out;
  }
};

}  // namespace

std::unique_ptr<ToolParser> make_mistral_parser() { return std::make_unique<MistralParser>(); }

}  // namespace zinfer::gateway::tools
