// OpenAI's response JSON for completions and chat completions, with vLLM's extensions: whole
// responses (non-stream), the chunks of a stream, logprobs (gateway/logprobs_json.h), echo,
// prompt logprobs and token ids. A request with a batch of prompts and n samples each has
// choices i * n + j (prompt i, sample j), as OpenAI and vLLM number them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/logprobs_json.h"
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
  int32_t top_logprobs = 0;         // completions: logprobs; chat: top_logprobs
  bool return_token_ids = false;
  bool as_token_ids = false;        // return_tokens_as_token_ids
  bool echo = false;
  bool echo_only = false;           // max_tokens 0 with echo: nothing generated is shown
  bool prompt_logprobs = false;     // vLLM's prompt_logprobs asked
};

ResponseMeta make_response_meta(const OpenAiRequest& request, uint64_t request_id);

// What the response needs of one prompt; `known` once the engine's first delta for it arrived.
struct PromptState {
  bool known = false;
  std::vector<int32_t> ids;
  std::string text;       // the prompt as the client sent it, or decoded from its ids
  std::string echo_text;  // what echo prepends: completions the prompt, chat the last message's content
  std::optional<protocol::PromptLogprobs> logprobs;
  int32_t tokens = 0;     // usage's prompt_tokens
  int32_t cached = 0;

  // Takes what the first TextDelta of the prompt's engine request carries.
  void take(protocol::TextDelta& delta, ApiKind kind);
};

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
  size_t characters = 0;      // streamed so far (echo included): the next chunk's text_offset
  bool started = false;       // a stream chunk went out for it

  void add(const protocol::TextDelta& delta);
  bool finished() const { return !finish_reason.empty(); }
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
};

nlohmann::json usage_json(const Usage& usage);

// The whole non-stream response: choices[i * n + j] belongs to prompts[i].
nlohmann::json full_response(const ResponseMeta& meta, const std::vector<PromptState>& prompts,
                             const std::vector<ChoiceAccumulator>& choices, int n, const Usage& usage,
                             const TokenNaming& naming);

// One stream chunk for one delta of choice `index`, with the echoed prompt in front when it is
// the choice's `first`; `text_offset`: the characters streamed before for the choice. `usage`:
// null, an object (continuous usage), or discarded (no usage key).
nlohmann::json delta_chunk(const ResponseMeta& meta, const PromptState& prompt, int index, bool first, size_t text_offset,
                           const protocol::TextDelta& delta, const TokenNaming& naming, const nlohmann::json& usage);
// The text a delta adds to its choice in a stream (echo_only shows none).
std::string streamed_text(const ResponseMeta& meta, const protocol::TextDelta& delta);

// A chat stream chunk for choice `index` whose delta is given (content or tool_calls,
// gateway/tool_stream.h) rather than made from the TextDelta's text; `d` gives the token ids,
// logprobs and finish_reason when `with_tokens` (the last chunk a TextDelta makes carries them).
// `finish_reason` replaces the delta's own when not empty ("tool_calls"). `usage` as delta_chunk's.
nlohmann::json chat_chunk(const ResponseMeta& meta, int index, const protocol::TextDelta& d, nlohmann::json delta,
                          bool with_tokens, const std::string& finish_reason, const TokenNaming& naming,
                          const nlohmann::json& usage);

// Chat streams open each choice with a delta carrying the role (and, with return_token_ids, the
// prompt's token ids), then with echo a delta carrying the echoed content.
nlohmann::json role_chunk(const ResponseMeta& meta, int index, const PromptState& prompt, const nlohmann::json& usage);
nlohmann::json chat_echo_chunk(const ResponseMeta& meta, int index, const std::string& content, const nlohmann::json& usage);

// The last chunk with stream_options.include_usage: no choices, the usage of the whole request.
nlohmann::json usage_chunk(const ResponseMeta& meta, const Usage& usage);

// "data: <json>\n\n" and the terminator.
std::string sse_event(const nlohmann::json& payload);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace zinfer::gateway
