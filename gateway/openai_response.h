// OpenAI's response JSON for completions and chat completions: whole responses (non-stream), the
// chunks of a stream, and logprobs in each endpoint's shape. The pipeline gives token ids, not
// token strings, so a token is named "token_id:<id>" (vLLM's return_tokens_as_token_ids form).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/openai_request.h"
#include "protocol/messages.h"

namespace zinfer::gateway {

// What identifies one response and shapes its JSON.
struct ResponseMeta {
  ApiKind kind = ApiKind::kCompletions;
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // unix seconds
  std::string model;
  bool want_logprobs = false;
  bool return_token_ids = false;
};

ResponseMeta make_response_meta(const OpenAiRequest& request, uint64_t request_id);

// Everything one sample (choice) produced so far.
struct ChoiceAccumulator {
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<float> logprobs;
  std::vector<std::vector<protocol::TopLogprob>> top_logprobs;
  std::string finish_reason;  // empty while running
  nlohmann::json stop_reason; // vLLM's: the stop string or stop token id that ended it, else null
  int32_t completion_tokens = 0;
  // Chat with a tool parser (gateway/tool_stream.h): the message's content (a string or null) and
  // tool_calls, set when the choice ends; null otherwise (the message is the text).
  nlohmann::json tool_content;
  nlohmann::json tool_calls;

  void add(const protocol::TextDelta& delta);
  bool finished() const { return !finish_reason.empty(); }
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
};

nlohmann::json usage_json(const Usage& usage);

// The whole non-stream response.
nlohmann::json full_response(const ResponseMeta& meta, const std::vector<ChoiceAccumulator>& choices,
                             const Usage& usage);

// One stream chunk for one delta. text_offset is where the delta's text starts in its choice.
nlohmann::json delta_chunk(const ResponseMeta& meta, const protocol::TextDelta& delta, size_t text_offset,
                           bool usage_null);

// A chat stream chunk whose delta is given (content or tool_calls, gateway/tool_stream.h) rather
// than made from the TextDelta's text; `d` gives the index, and the token ids, logprobs and
// finish_reason when `with_tokens` (the last chunk a TextDelta makes carries them).
// `finish_reason` replaces the delta's own when not empty ("tool_calls").
nlohmann::json chat_chunk(const ResponseMeta& meta, const protocol::TextDelta& d, nlohmann::json delta,
                          bool with_tokens, const std::string& finish_reason, bool usage_null);

// Chat streams open each choice with a delta carrying the role.
nlohmann::json role_chunk(const ResponseMeta& meta, int index, bool usage_null);

// The last chunk with stream_options.include_usage: no choices, the usage of the whole request.
nlohmann::json usage_chunk(const ResponseMeta& meta, const Usage& usage);

// "data: <json>\n\n" and the terminator.
std::string sse_event(const nlohmann::json& payload);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace zinfer::gateway
