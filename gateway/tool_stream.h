// One choice's output read by a tool parser: while it streams, the chat deltas that OpenAI's (and
// vLLM's) streams carry for tool calls; at the end, the message's content and tool_calls.
//
// Each time text arrives the whole output so far is parsed again (tool outputs are short; the
// parse is linear) and compared with what was already sent: new content is sent as a content
// delta; a call whose name became known as {index, id, type, function: {name, arguments: ""}};
// what its arguments grew by as {index, function: {arguments}}. Text is sent only once the parser
// is sure it is content, so a tag split across deltas never leaks into the content.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/tool_parsers/tool_parser.h"

namespace zinfer::gateway {

class ToolCallStream {
 public:
  // `max_calls`: calls after this many are dropped (parallel_tool_calls false: 1).
  ToolCallStream(const tools::ToolParser& parser, size_t max_calls);

  // The output grew by `text`: the deltas to send now (each a chat completion chunk's "delta").
  std::vector<nlohmann::json> feed(std::string_view text);
  // The sample ended: the last deltas (text held back, calls completed). Call once.
  std::vector<nlohmann::json> finish();

  // After finish(): the message's content (a string, or null when the output was only calls) and
  // its tool_calls ([] when none).
  nlohmann::json content() const;
  nlohmann::json tool_calls() const;
  bool called() const { return !final_.calls.empty(); }

 private:
  tools::ParsedOutput parse(bool final) const;
  std::vector<nlohmann::json> send(const tools::ParsedOutput& parsed, bool final);

  const tools::ToolParser& parser_;
  size_t max_calls_;
  std::string text_;
  std::string content_sent_;
  struct SentCall {
    std::string id, name, arguments;
  };
  std::vector<SentCall> sent_;
  tools::ParsedOutput final_;
  bool finished_ = false;
};

}  // namespace zinfer::gateway
