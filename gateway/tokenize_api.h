// vLLM's /tokenize and /detokenize: their request bodies into a protocol::TokenizeRequest, and the
// TokenizeReply into their response JSON.
//   POST /tokenize    {model?, prompt, add_special_tokens = true, return_token_strs = false}
//                  or {model?, messages, add_generation_prompt = true, add_special_tokens = false,
//                      return_token_strs = false, chat_template_kwargs?, continue_final_message = false}
//                  -> {count, max_model_len, tokens, token_strs}   (token_strs null unless asked)
//   POST /detokenize  {model?, tokens}  -> {prompt}
// As for generation, a field the shape does not know is a 400 naming it, and so is a field whose
// value asks for something zinfer does not do (a per-request chat_template, tools, ...).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "gateway/options.h"
#include "protocol/messages.h"

namespace zinfer::gateway {

// Throws ApiError (400; 404 for a model not served).
protocol::TokenizeRequest parse_tokenize_body(std::string_view body, const HttpOptions& options);
protocol::TokenizeRequest parse_detokenize_body(std::string_view body, const HttpOptions& options);

nlohmann::json tokenize_response(const protocol::TokenizeReply& reply, bool return_token_strs);
nlohmann::json detokenize_response(const protocol::TokenizeReply& reply);

}  // namespace zinfer::gateway
