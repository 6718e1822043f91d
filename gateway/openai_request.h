// Parsing and validating the body of POST /v1/completions and /v1/chat/completions into a
// protocol::GenerateRequest plus what the response needs to look like. Every problem becomes an
// ApiError naming the offending parameter; nothing here trusts the client.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gateway/options.h"
#include "gateway/tool_request.h"
#include "gateway/reasoning/reasoning_parser.h"
#include "protocol/messages.h"

namespace zinfer::gateway {

enum class ApiKind { kCompletions, kChat };

struct OpenAiRequest {
  ApiKind kind = ApiKind::kCompletions;
  protocol::GenerateRequest request;  // request_id and arrival_ns are set by the caller
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool want_logprobs = false;     // completions: logprobs given; chat: logprobs true
  bool return_token_ids = false;  // zinfer extension: each choice also lists its token ids
  std::string client_request_id;  // vLLM's request_id: the response's id is built from it
  ToolRequest tools;              // chat: tools, tool_choice, parallel_tool_calls
  reasoning::ReasoningMode reasoning;  // chat with [server] reasoning_parser: reasoning_content
};

// Throws ApiError (400 for bad JSON, types and values, 404 for a model other than the served one).
OpenAiRequest parse_openai_request(ApiKind kind, std::string_view body, const HttpOptions& options);

// messages, add_generation_prompt and chat_template_kwargs of a chat body into `request`
// (messages, is_chat, add_generation_prompt, enable_thinking). Throws ApiError.
void parse_chat_messages(const nlohmann::json& body, protocol::GenerateRequest& request);

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
