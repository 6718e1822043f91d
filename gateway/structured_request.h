// The structured output fields of a /v1/completions or /v1/chat/completions body, mapped onto
// SamplingParams.structured (protocol 1.6), as OpenAI and vLLM define them:
//
//   response_format {"type": "text"}                    none
//   response_format {"type": "json_object"}             kJsonObject
//   response_format {"type": "json_schema", "json_schema": {name, schema, strict, description}}
//                                                       kJsonSchema (schema)
//   structured_outputs {json | regex | choice | grammar | json_object: true}   (vLLM)
//   guided_json | guided_regex | guided_choice | guided_grammar                (vLLM, older)
//
// At most one constraint per request (a 400 names the second). The source is compiled here
// (grammar_check.h), so a bad schema, an unsupported keyword, a regex or grammar that does not
// parse is a 400 naming the field and the construct before anything is queued.
//
// vLLM's options beside the constraints: structured_outputs.disable_fallback (there is one
// engine and it never falls back: either value is what happens), disable_additional_properties
// (properties a schema does not declare are never generated unless its additionalProperties asks
// for them, which is what true asks; false asks for nothing more), guided_decoding_backend "auto"
// are accepted. What cannot be honoured is a 400 naming it: disable_any_whitespace true,
// whitespace_pattern / guided_whitespace_pattern (the JSON grammar's whitespace is fixed,
// docs/structured-output.md), structural_tag, a guided_decoding_backend other than "auto",
// response_format types other than the three above.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "protocol/messages.h"

namespace zinfer::gateway {

// `body` is the parsed request; `body_text` its text, parsed again with the keys' order kept for
// schemas given as objects (a schema's property order is the order the output lists them in).
// Throws ApiError 400 naming the field.
std::optional<protocol::StructuredOutput> parse_structured_output(const nlohmann::json& body,
                                                                  std::string_view body_text);

}  // namespace zinfer::gateway
