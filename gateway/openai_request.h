// Parsing and validating the body of POST /v1/completions and /v1/chat/completions into a
// protocol::GenerateRequest plus what the response needs to look like. Every problem becomes an
// ApiError naming the offending parameter; nothing here trusts the client.
#pragma once

#include <string>
#include <string_view>

#include "gateway/options.h"
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
};

// Throws ApiError (400 for bad JSON, types and values, 404 for a model other than the served one).
OpenAiRequest parse_openai_request(ApiKind kind, std::string_view body, const HttpOptions& options);

// Checks sampling values that every entry point must respect (HTTP and ZeroMQ); throws ApiError
// naming the OpenAI parameter. max_model_len 0 skips the context-length checks.
void validate_sampling(const protocol::SamplingParams& sampling, int max_model_len);

// Checks a GenerateRequest that arrived already built (the ZeroMQ endpoint): exactly one input,
// token ids in range, sampling values, predicted_output_tokens not negative. Throws ApiError.
void validate_generate_request(const protocol::GenerateRequest& request, int max_model_len);

}  // namespace zinfer::gateway
