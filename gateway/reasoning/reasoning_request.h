// What a chat request does with the reasoning part: the server's parser ([server]
// reasoning_parser), whether this request's output begins inside the part (reasoning_parser.h),
// and vLLM's `include_reasoning`. With a parser and an output that begins inside the part, a
// structured output constraint applies after it: StructuredOutput.begin_after is the end tag.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gateway/reasoning/reasoning_parser.h"
#include "protocol/messages.h"

namespace zinfer::gateway::reasoning {

// `parser_name`: the server's setting ("" = none). `chat`: the request is a chat completion (a
// completion has no reasoning part). Reads include_reasoning from `body`; throws ApiError 400
// naming it when it asks for something without a parser. Sets request.sampling.structured's
// begin_after where the output begins inside the reasoning part.
ReasoningMode parse_reasoning(bool chat, const nlohmann::json& body, const std::string& parser_name,
                              protocol::GenerateRequest& request);

}  // namespace zinfer::gateway::reasoning
