// Parsing and validating the body of POST /v1/completions and /v1/chat/completions into a
// protocol::GenerateRequest plus what the response needs to look like. Every problem becomes an
// ApiError naming the offending parameter; nothing here trusts the client.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/options.h"
#include "gateway/tool_request.h"
#include "gateway/reasoning/reasoning_parser.h"
#include "protocol/messages.h"

namespace zinfer::gateway {

enum class ApiKind { kCompletions, kChat };

// One prompt of a completions request: text, or token ids.
struct PromptInput {
  std::string text;
  std::vector<int32_t> ids;
};

struct OpenAiRequest {
  ApiKind kind = ApiKind::kCompletions;
  // The first prompt's request; request_id and arrival_ns are set by the caller. A batch of
  // prompts (completions) runs as one engine request per prompt (request_for below).
  protocol::GenerateRequest request;
  std::vector<PromptInput> prompts;  // completions: every prompt, in order (at least one)
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool continuous_usage = false;  // stream_options.continuous_usage_stats: usage in every chunk
  bool want_logprobs = false;     // completions: logprobs given; chat: logprobs true
  bool return_token_ids = false;  // vLLM's: each choice lists its token ids, and the prompt's
  bool return_tokens_as_token_ids = false;  // vLLM's: logprob tokens named "token_id:N"
  // echo: completions prepend each choice's prompt (and its logprobs, with logprobs); chat
  // prepends the last message's content when it is the assistant's (vLLM's meaning).
  bool echo = false;
  // max_tokens 0 with echo (completions): the scoring call of evaluation harnesses. The engine
  // generates one token, which the response leaves out: it holds the prompt and its logprobs.
  bool echo_only = false;
  int32_t prompt_logprobs = -1;   // vLLM's prompt_logprobs; -1 = not asked
  std::string client_request_id;  // vLLM's request_id: the response's id is built from it
  ToolRequest tools;              // chat: tools, tool_choice, parallel_tool_calls
  reasoning::ReasoningMode reasoning;  // chat with [server] reasoning_parser: reasoning_content
};

// The engine request of prompt `index` (a copy of `request` with that prompt).
protocol::GenerateRequest request_for(const OpenAiRequest& request, size_t index);

// Throws ApiError (400 for bad JSON, types and values, 404 for a model other than the served one).
OpenAiRequest parse_openai_request(ApiKind kind, std::string_view body, const HttpOptions& options);

// messages, add_generation_prompt, continue_final_message, chat_template (refused unless
// `trust_chat_template`) and chat_template_kwargs of a chat body into `request`. Throws ApiError.
void parse_chat_messages(const nlohmann::json& body, protocol::GenerateRequest& request,
                         bool trust_chat_template = false);

// Whether `name` is the served model's name or one of its aliases.
bool serves_model(const HttpOptions& options, const std::string& name);

// Sets each sampling default (generation_config.json's) that `body` leaves out (or null), as if the
// client had sent it: the field then goes through the same checks as a client's.
void apply_sampling_defaults(const SamplingDefaults& defaults, nlohmann::json& body);

// Checks sampling values that every entry point must respect (HTTP and ZeroMQ); throws ApiError
// naming the OpenAI parameter. max_model_len 0 skips the context-length checks.
void validate_sampling(const protocol::SamplingParams& sampling, int max_model_len);

// Checks a GenerateRequest that arrived already built (the ZeroMQ endpoint): exactly one input,
// token ids in range, sampling values, predicted_output_tokens not negative. Throws ApiError.
void validate_generate_request(const protocol::GenerateRequest& request, int max_model_len);

}  // namespace zinfer::gateway
