// The tool-calling fields of a chat request, as vLLM's OpenAI server reads them: `tools`,
// `tool_choice`, `parallel_tool_calls`, and the tool fields of the messages (an assistant's
// `tool_calls`, a tool message's `tool_call_id`, a `name`).
//
// - The tools go to the chat template as sent (key order kept), whatever the tool_choice: with
//   "none" too, as vLLM renders them unless its --exclude-tools-when-tool-choice-none is set.
// - "required" and a named function are enforced with the grammar (SamplingParams.structured): a
//   named call's output is that function's arguments, valid for its `parameters` schema;
//   "required" makes a JSON list of {"name": one of the tools, "parameters": that tool's
//   arguments}, at least one, at most one when parallel_tool_calls is false (vLLM's schema).
// - "auto" leaves the output free and reads it with the configured tool parser; like vLLM, a
//   server without --enable-auto-tool-choice and --tool-call-parser refuses it (and tools without
//   a tool_choice mean "auto").
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gateway/options.h"
#include "gateway/tool_parsers/tool_parser.h"
#include "protocol/messages.h"

namespace zinfer::gateway {

struct ToolRequest {
  enum class Choice { kNone, kAuto, kRequired, kNamed };
  Choice choice = Choice::kNone;
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // as sent (validated)
  std::string function;      // kNamed: the function to call
  bool parallel = true;      // parallel_tool_calls
  // The parser the output goes through: the configured one (kAuto), a forced-call parser
  // (kRequired, kNamed), or none.
  std::shared_ptr<const tools::ToolParser> parser;

  size_t max_calls() const { return parallel ? std::numeric_limits<size_t>::max() : 1; }
};

// tools, tool_choice and parallel_tool_calls of a chat body (`body_text` is the same body, read
// again to keep the tools' key order for the template). Sets request.tools (JSON text), and for
// forced calls request.sampling.structured; with the auto parser, skip_special_tokens false when
// the parser's tags need it. Throws ApiError naming the field.
ToolRequest parse_tool_request(const nlohmann::json& body, std::string_view body_text, const HttpOptions& options,
                               protocol::GenerateRequest& request);

// The `tools` of a chat body, checked as parse_tool_request checks them, in the client's key
// order (read again from `body_text`); an empty array when absent. For /tokenize, which renders
// the tools without calling any. Throws ApiError naming the field.
nlohmann::ordered_json parse_tools(const nlohmann::json& body, std::string_view body_text);

// Whether `key` is a tool field of a chat message (tool_calls, tool_call_id, name).
bool is_message_tool_field(std::string_view key);

// The tool fields of messages[index] into `out`; arguments given as a JSON string must parse.
// Throws ApiError naming the field.
void parse_message_tool_fields(const nlohmann::json& message, size_t index, protocol::ChatMessage& out);

// The JSON Schema a forced choice puts on the output (kRequired, kNamed).
nlohmann::ordered_json forced_calls_schema(const ToolRequest& request);

// A start-up check of the tool settings: "" when they are usable, else why not (an unknown
// parser name; --enable-auto-tool-choice without --tool-call-parser).
std::string check_tool_settings(const HttpOptions& options);

}  // namespace zinfer::gateway
