#include "gateway/tokenize_api.h"

#include <limits>
#include <set>
#include <string>

#include "gateway/api_error.h"
#include "gateway/openai_request.h"
#include "gateway/tool_request.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

json parse_object(std::string_view text) {
  json body = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return body;
}

const json* given(const json& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

bool flag(const json& body, const char* name, bool fallback) {
  const json* v = given(body, name);
  if (!v) return fallback;
  if (!v->is_boolean()) throw invalid_param(name, std::string("'") + name + "' must be a boolean");
  return v->get<bool>();
}

// Every key must be one of `honoured`, or one of `default_only` with a value that asks for nothing
// (null, false, or an empty list): anything else is a 400 naming it.
void check_fields(const json& body, const std::set<std::string>& honoured, const std::set<std::string>& default_only) {
  for (const auto& [key, value] : body.items()) {
    if (honoured.count(key)) continue;
    if (default_only.count(key)) {
      const bool no_op = value.is_null() || (value.is_boolean() && !value.get<bool>()) ||
                         (value.is_array() && value.empty());
      if (no_op) continue;
      throw invalid_param(key, "'" + key + "' is not supported");
    }
    throw invalid_param(key, "unknown field '" + key + "' (zinfer refuses fields it does not know)");
  }
}

void check_model(const json& body, const HttpOptions& options) {
  if (const json* m = given(body, "model")) {
    if (!m->is_string()) throw invalid_param("model", "'model' must be a string");
    if (!serves_model(options, m->get<std::string>())) {
      throw ApiError(404, "the model '" + m->get<std::string>() + "' does not exist", "model");
    }
  }
}

}  // namespace

protocol::TokenizeRequest parse_tokenize_body(std::string_view text, const HttpOptions& options) {
  const json body = parse_object(text);
  protocol::TokenizeRequest out;
  if (given(body, "messages")) {
    check_fields(body, {"model", "messages", "add_generation_prompt", "add_special_tokens", "return_token_strs",
                        "chat_template_kwargs", "continue_final_message", "chat_template", "tools"},
                 {"mm_processor_kwargs"});
    check_model(body, options);
    protocol::GenerateRequest chat;
    parse_chat_messages(body, chat, options.trust_request_chat_template);
    const nlohmann::ordered_json tools = parse_tools(body, text);
    if (!tools.empty()) out.tools = tools.dump();
    out.continue_final_message = chat.continue_final_message;
    out.chat_template = chat.chat_template;
    out.is_chat = true;
    for (auto& m : chat.messages) out.messages.push_back(std::move(m));
    out.add_generation_prompt = chat.add_generation_prompt;
    out.enable_thinking = chat.enable_thinking;
    out.chat_template_kwargs = chat.chat_template_kwargs;
    out.add_special_tokens = flag(body, "add_special_tokens", false) ? 1 : 0;
  } else {
    check_fields(body, {"model", "prompt", "add_special_tokens", "return_token_strs"}, {});
    check_model(body, options);
    const json* p = given(body, "prompt");
    if (!p) throw invalid_param("prompt", "'prompt' (or 'messages') is required");
    if (!p->is_string()) throw invalid_param("prompt", "'prompt' must be a string");
    out.prompt = p->get<std::string>();
    out.add_special_tokens = flag(body, "add_special_tokens", true) ? 1 : 0;
  }
  out.return_token_strs = flag(body, "return_token_strs", false);
  return out;
}

protocol::TokenizeRequest parse_detokenize_body(std::string_view text, const HttpOptions& options) {
  const json body = parse_object(text);
  check_fields(body, {"model", "tokens"}, {});
  check_model(body, options);
  protocol::TokenizeRequest out;
  out.detokenize = true;
  const json* t = given(body, "tokens");
  if (!t || !t->is_array()) throw invalid_param("tokens", "'tokens' must be an array of token ids");
  for (const auto& e : *t) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      throw invalid_param("tokens", "'tokens' must be an array of token ids (integers >= 0)");
    }
    out.tokens.push_back(static_cast<int32_t>(e.get<int64_t>()));
  }
  return out;
}

json tokenize_response(const protocol::TokenizeReply& reply, bool return_token_strs) {
  return {{"count", reply.tokens.size()},
          {"max_model_len", reply.max_model_len},
          {"tokens", reply.tokens},
          {"token_strs", return_token_strs ? json(reply.token_strs) : json(nullptr)}};
}

json detokenize_response(const protocol::TokenizeReply& reply) { return {{"prompt", reply.text}}; }

}  // namespace zinfer::gateway
