// Every top-level field of a /v1/completions or /v1/chat/completions body that the gateway knows:
// the fields of OpenAI's request schemas and of vLLM's (vllm/entrypoints/openai/protocol.py:
// CompletionRequest, ChatCompletionRequest), plus zinfer's own extensions. Each field is either
// honoured (the parser maps it onto the request) or refused with a 400 naming it whenever its
// value would ask for something zinfer does not do; a value that asks for nothing (the default:
// `echo: false`, `response_format: {"type": "text"}`, `tool_choice: "none"`) is accepted, since
// honouring it is doing nothing.
//
// A field that is in no schema is refused with a 400 naming it. vLLM accepts such fields and only
// logs a warning; zinfer refuses them because a misspelt field (`max_token`) silently ignored
// changes what the client gets without telling it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/openai_request.h"

namespace zinfer::gateway {

enum class FieldUse {
  kHonoured,    // parsed and applied (gateway/openai_request.cpp)
  kDefaultOnly, // only its no-op value is accepted; any other is a 400 naming the field
};

struct RequestField {
  std::string_view name;
  bool completions = false;  // a field of /v1/completions
  bool chat = false;         // a field of /v1/chat/completions
  FieldUse use = FieldUse::kHonoured;
  // kDefaultOnly: whether `value` (present, not null) asks for nothing; null is always accepted.
  bool (*no_op)(const nlohmann::json& value) = nullptr;
  std::string_view why;  // kDefaultOnly: why other values are refused (ends the 400's message)
};

// The table, in the order of the schemas.
const std::vector<RequestField>& request_fields();

// The entry for `name` on the endpoint `kind`, or null when the endpoint has no such field.
const RequestField* find_request_field(ApiKind kind, std::string_view name);

// Refuses, with a 400 naming the field, every key of `body` the endpoint does not know and every
// kDefaultOnly field whose value asks for something.
void check_request_fields(ApiKind kind, const nlohmann::json& body);

}  // namespace zinfer::gateway
