// Server-sent events as OpenAI-compatible servers stream them, and the meaning of each event's
// data for the two OpenAI endpoints. Kept apart from the socket code so it can be tested on bytes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace zinfer::bench {

// Splits a byte stream into events: "data:" lines are joined with '\n', a blank line ends the
// event, ':' lines are comments, other fields are ignored. Accepts \n, \r\n and \r line ends and
// lines split across feed() calls.
class SseParser {
 public:
  using Handler = std::function<void(std::string_view data)>;
  void feed(std::string_view bytes, const Handler& on_event);
  void finish(const Handler& on_event);  // dispatches an event the stream ended without a blank line

 private:
  void line(std::string_view l, const Handler& on_event);
  std::string partial_;  // an unfinished line
  std::string data_;
  bool has_data_ = false;
  bool last_was_cr_ = false;
};

enum class ApiKind { kCompletions, kChat };

// One event's data, interpreted. `text` is the generated text it carries (choices[0].text, or
// choices[0].delta.content plus reasoning content for chat), empty when it carries none.
struct StreamEvent {
  bool done = false;  // "[DONE]"
  std::string text;
  bool choice = false;  // the event is about the choice (text or not), not only usage or [DONE]
  std::optional<std::string> finish_reason;
  std::optional<int> completion_tokens;  // from a usage object
  std::optional<int> prompt_tokens;
  std::optional<std::string> error;      // an {"error": ...} object the server streamed
};
// Throws std::runtime_error when the data is not JSON (the message shows the start of it).
StreamEvent interpret_openai_event(std::string_view data, ApiKind kind);

// The JSON body of a streaming request: temperature 0, stream_options.include_usage, the
// max token count under both names for chat (max_tokens and max_completion_tokens), ignore_eos
// when asked (a vLLM/zinfer extension; other servers ignore unknown fields).
std::string openai_request_body(ApiKind kind, const std::string& model, const std::string& prompt,
                                int max_tokens, bool ignore_eos);

}  // namespace zinfer::bench
