// "hermes": Hermes 2 Pro and Qwen2.5/Qwen3 (their chat templates ask for this format):
//   text <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>\n<tool_call>...</tool_call>
// Any number of calls, with text before, between and after them. A block whose JSON is not a call
// object (or has more than white space after it) stays in the content, tags included, as vLLM
// leaves it. A block the output ends in without its closing tag (max_tokens) is still a call
// when its object is complete.
#include "gateway/tool_parsers/parsers.h"

#include "gateway/tool_parsers/call_object.h"
#include "gateway/tool_parsers/json_scan.h"

namespace zinfer::gateway::tools {
namespace {

constexpr std::string_view kStart = "<tool_call>";
constexpr std::string_view kEnd = "</tool_call>";

class HermesParser final : public ToolParser {
 public:
  std::string_view name() const override { return "hermes"; }

  ParsedOutput parse(std::string_view text, bool final) const override {
    ParsedOutput out;
    size_t pos = 0;
    while (true) {
      const size_t start = text.find(kStart, pos);
      if (start == std::string_view::npos) {
        std::string_view tail = text.substr(pos);
        if (!final) tail.remove_suffix(partial_tag_suffix(tail, kStart));
        out.texts.back() += tail;
        return out;
      }
      out.texts.back() += text.substr(pos, start - pos);
      const size_t body = start + kStart.size();
      const size_t end = text.find(kEnd, body);
      const bool closed = end != std::string_view::npos;
      const std::string_view inner = text.substr(body, closed ? end - body : std::string_view::npos);
      const CallObject call = read_call_object(inner, skip_whitespace(inner, 0), {"arguments"});
      if (!closed && !final) {
        // The block is still being written: report the call once its name is known.
        if (call.status == CallObject::Status::kInvalid) {
          out.texts.back() += text.substr(start);  // will be content whatever follows
        } else if (call.has_name) {
          out.calls.push_back(call.call);
          out.texts.emplace_back();
        }
        return out;
      }
      bool is_call = call.status == CallObject::Status::kComplete;
      if (is_call) {
        const std::string_view rest = trim(inner.substr(call.end));
        // After the object: nothing, or (an unclosed block at the end) the closing tag cut short.
        is_call = rest.empty() || (!closed && kEnd.substr(0, rest.size()) == rest);
      }
      const size_t block_end = closed ? end + kEnd.size() : text.size();
      if (is_call) {
        out.calls.push_back(call.call);
        out.texts.emplace_back();
      } else {
        out.texts.back() += text.substr(start, block_end - start);
      }
      pos = block_end;
    }
  }
};

}  // namespace

std::unique_ptr<ToolParser> make_hermes_parser() { return std::make_unique<HermesParser>(); }

}  // namespace zinfer::gateway::tools
