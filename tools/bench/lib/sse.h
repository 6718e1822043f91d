// Server-sent events as OpenAI-compatible servers stream them, and the meaning of each event's
// data for the two OpenAI endpoints. Kept apart from the socket code so it can be tested on bytes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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

// What the user adds to every request body (vLLM benchmark_serving's flags): the sampling flags
// (--temperature, --top-p, --top-k, --min-p; temperature 0 = greedy when not given, as vLLM) and
// --extra-body, a JSON object merged into the body last, so that its keys replace the benchmark's
// own (`{"max_tokens": 5}` wins over the dataset's length).
struct RequestBodyOptions {
  std::optional<double> temperature, top_p, min_p;
  std::optional<int> top_k;
  nlohmann::json extra_body = nlohmann::json::object();
};

// Parses --extra-body's text; throws std::invalid_argument unless it is a JSON object.
nlohmann::json parse_extra_body(const std::string& text);

// Parses --header items "KEY=VALUE"; throws std::invalid_argument naming a bad item.
std::vector<std::pair<std::string, std::string>> parse_headers(const std::vector<std::string>& items);

// The JSON body of a streaming request: the sampling of `options` (temperature 0 by default),
// stream_options.include_usage, the max token count under both names for chat (max_tokens and
// max_completion_tokens), ignore_eos when asked (a vLLM/zinfer extension), then extra_body.
std::string openai_request_body(ApiKind kind, const std::string& model, const std::string& prompt,
                                int max_tokens, bool ignore_eos, const RequestBodyOptions& options = {});

}  // namespace zinfer::bench
