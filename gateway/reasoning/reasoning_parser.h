// Reasoning parsers ([server] reasoning_parser, `zinfer serve --reasoning-parser`): which models'
// output begins with a reasoning part, how that part is delimited, and whether a request's
// output begins inside it. The gateway splits the reasoning part into `reasoning_content` and the
// rest into `content` (reasoning_split.h), and a structured output constraint applies after it
// (StructuredOutput.begin_after = the end tag).
//
// Both parsers follow vLLM's (vllm/reasoning/qwen3_reasoning_parser.py, deepseek_r1_...): the chat
// templates of current Qwen3 and DeepSeek-R1 models open `<think>` in the prompt, so the output
// begins inside the reasoning part; a `<think>` the model writes itself (older templates) before
// the end tag is dropped; everything up to `</think>` is reasoning, everything after it content; an
// output without `</think>` (cut by max_tokens) is reasoning only. They differ in one decision:
// - qwen3: `chat_template_kwargs.enable_thinking: false` makes the template close the reasoning
//   part in the prompt (`<think>\n\n</think>\n\n`), so the whole output is content;
// - deepseek_r1: the template always opens the reasoning part; enable_thinking changes nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/messages.h"

namespace zinfer::gateway::reasoning {

struct ReasoningParser {
  std::string_view name;
  std::string_view start_tag;     // dropped where the model writes it before end_tag
  std::string_view end_tag;       // ends the reasoning part
  bool follows_enable_thinking;   // enable_thinking false = no reasoning part
};

const std::vector<ReasoningParser>& reasoning_parsers();

// The parser called `name`, or null.
const ReasoningParser* find_reasoning_parser(std::string_view name);

// "qwen3, deepseek_r1": for messages naming what is known.
std::string reasoning_parser_names();

// Whether the output of `request` begins inside the reasoning part. Only chat requests have one:
// a completion's prompt is the client's, with no template that opens the part.
bool starts_in_reasoning(const ReasoningParser& parser, const protocol::GenerateRequest& request);

// What one request does with its reasoning part.
struct ReasoningMode {
  const ReasoningParser* parser = nullptr;  // null: no parsing, the output is all content
  bool starts_inside = false;               // the output begins inside the reasoning part
  bool include = true;                      // include_reasoning: false drops reasoning_content
  bool active() const { return parser != nullptr; }
};

}  // namespace zinfer::gateway::reasoning
