// Tool parsers: the plug-ins that find function calls in a model's output, one per model family's
// format (vLLM's --tool-call-parser). A parser reads the whole output when the sample is over, and
// also each prefix of it while it streams; gateway/tool_stream.h turns the successive parses into
// OpenAI's message.tool_calls and stream deltas.
//
// A parser is a pure function of the text. Its two modes must agree: what a prefix parse reports
// (a call's name, the start of its arguments, text that is surely content) never changes once
// reported, except where the output turns out malformed after the fact (a stream cannot take
// back what it sent; the final parse then leaves the malformed part as content).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::gateway::tools {

struct ParsedCall {
  std::string name;
  // The JSON text of the arguments as the model wrote it (complete in a final parse; in a prefix
  // parse the part written so far).
  std::string arguments;
};

// A parse of an output: texts[i] is the text before call i (content, or formatting around the
// calls), texts.back() the text after the last call; texts.size() == calls.size() + 1. In a
// prefix parse the text that may still turn out to be part of a call (a tag arriving in pieces, a
// call whose name is not complete) is in neither.
struct ParsedOutput {
  std::vector<std::string> texts{std::string()};
  std::vector<ParsedCall> calls;

  // The message's content: the text outside the calls. Without calls it is the output itself; with
  // calls the white space next to them is formatting and is dropped (the text before the first
  // call loses its trailing white space, the later texts are trimmed). `final`: a prefix parse
  // holds back trailing white space, which a later call would drop.
  std::string content(bool final) const;
};

class ToolParser {
 public:
  virtual ~ToolParser() = default;
  virtual std::string_view name() const = 0;
  // The whole output (`final`), or the part of it generated so far.
  virtual ParsedOutput parse(std::string_view text, bool final) const = 0;
  // Whether the output must be detokenized with special tokens kept (vLLM's adjust_request):
  // the tags this format uses are special tokens in some tokenizers.
  virtual bool needs_special_tokens() const { return true; }
  // A new tool call id ("call_" and 24 letters or digits; Mistral's templates want 9).
  virtual std::string call_id() const;
};

// The parsers chosen by name (config [server] tool_call_parser, flag --tool-call-parser).
// Null for an unknown name. The parsers are stateless and live as long as the program.
const ToolParser* find_tool_parser(std::string_view name);
// Their names, for error messages and documentation.
std::vector<std::string> tool_parser_names();

// The parsers of forced calls (tool_choice "required" or a named function), whose output the
// grammar makes JSON: a named call's arguments, or the array of {"name", "parameters"} objects of
// "required" (vLLM's shape).
std::unique_ptr<ToolParser> named_call_parser(std::string function_name);
std::unique_ptr<ToolParser> required_calls_parser();

// A random id: `prefix` then `length` letters or digits.
std::string random_call_id(std::string_view prefix, size_t length);

// Whitespace helpers shared by the parsers.
std::string_view trim(std::string_view s);
std::string_view trim_left(std::string_view s);
std::string_view trim_right(std::string_view s);

}  // namespace zinfer::gateway::tools
