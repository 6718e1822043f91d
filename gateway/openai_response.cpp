#include "gateway/openai_response.h"

#include <chrono>

namespace zinfer::gateway {
namespace {

using nlohmann::json;

std::string token_name(int32_t id) { return "token_id:" + std::to_string(id); }

const char* object_name(ApiKind kind, bool chunk) {
  if (kind == ApiKind::kChat) return chunk ? "chat.completion.chunk" : "chat.completion";
  return "text_completion";
}

json finish_json(const std::string& reason) { return reason.empty() ? json(nullptr) : json(reason); }

// vLLM's stop_reason: the stop string or stop token id that ended the choice; null otherwise.
json stop_reason_json(const protocol::TextDelta& d) {
  if (!d.stop_string.empty()) return d.stop_string;
  if (d.stop_token >= 0) return d.stop_token;
  return nullptr;
}

// Completions' logprobs: parallel arrays over the tokens.
json completion_logprobs(const std::vector<int32_t>& ids, const std::vector<float>& lps,
                         const std::vector<std::vector<protocol::TopLogprob>>& tops, size_t text_offset) {
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(), offsets = json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    tokens.push_back(token_name(ids[i]));
    token_logprobs.push_back(i < lps.size() ? json(lps[i]) : json(nullptr));
    if (i < tops.size() && !tops[i].empty()) {
      json alternatives = json::object();
      for (const auto& t : tops[i]) alternatives[token_name(t.token)] = t.logprob;
      top.push_back(alternatives);
    } else {
      top.push_back(nullptr);
    }
    // Per-token text is not known to the gateway; every token of a delta points at its start.
    offsets.push_back(text_offset);
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top}, {"text_offset", offsets}};
}

// Chat's logprobs: one entry per token.
json chat_logprobs(const std::vector<int32_t>& ids, const std::vector<float>& lps,
                   const std::vector<std::vector<protocol::TopLogprob>>& tops) {
  json content = json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    json top = json::array();
    if (i < tops.size()) {
      for (const auto& t : tops[i]) top.push_back({{"token", token_name(t.token)}, {"logprob", t.logprob}, {"bytes", nullptr}});
    }
    content.push_back({{"token", token_name(ids[i])},
                       {"logprob", i < lps.size() ? json(lps[i]) : json(nullptr)},
                       {"bytes", nullptr},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json logprobs_json(const ResponseMeta& meta, const std::vector<int32_t>& ids, const std::vector<float>& lps,
                   const std::vector<std::vector<protocol::TopLogprob>>& tops, size_t text_offset) {
  if (!meta.want_logprobs) return nullptr;
  return meta.kind == ApiKind::kChat ? chat_logprobs(ids, lps, tops) : completion_logprobs(ids, lps, tops, text_offset);
}

json base(const ResponseMeta& meta, bool chunk) {
  return {{"id", meta.id}, {"object", object_name(meta.kind, chunk)}, {"created", meta.created}, {"model", meta.model}};
}

}  // namespace

ResponseMeta make_response_meta(const OpenAiRequest& request, uint64_t request_id) {
  ResponseMeta m;
  m.kind = request.kind;
  // vLLM builds the id from the client's request_id when it gives one.
  m.id = std::string(request.kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-") +
         (request.client_request_id.empty() ? std::to_string(request_id) : request.client_request_id);
  m.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch()).count();
  m.model = request.request.model;
  m.want_logprobs = request.want_logprobs;
  m.return_token_ids = request.return_token_ids;
  return m;
}

void ChoiceAccumulator::add(const protocol::TextDelta& d) {
  text += d.text;
  token_ids.insert(token_ids.end(), d.token_ids.begin(), d.token_ids.end());
  logprobs.insert(logprobs.end(), d.logprobs.begin(), d.logprobs.end());
  top_logprobs.insert(top_logprobs.end(), d.top_logprobs.begin(), d.top_logprobs.end());
  completion_tokens = std::max<int32_t>(d.completion_tokens, static_cast<int32_t>(token_ids.size()));
  if (!d.finish_reason.empty()) {
    finish_reason = d.finish_reason;
    stop_reason = stop_reason_json(d);
  }
}

json usage_json(const Usage& u) {
  json j = {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens}};
  if (u.cached_tokens > 0) j["prompt_tokens_details"] = {{"cached_tokens", u.cached_tokens}};
  return j;
}

json full_response(const ResponseMeta& meta, const std::vector<ChoiceAccumulator>& choices, const Usage& usage) {
  json out = base(meta, false);
  json list = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const auto& c = choices[i];
    json choice = {{"index", i}, {"finish_reason", finish_json(c.finish_reason)}, {"stop_reason", c.stop_reason},
                   {"logprobs", logprobs_json(meta, c.token_ids, c.logprobs, c.top_logprobs, 0)}};
    if (meta.kind == ApiKind::kChat && !c.tool_calls.is_null()) {
      choice["message"] = {{"role", "assistant"}, {"content", c.tool_content}};
      if (!c.tool_calls.empty()) choice["message"]["tool_calls"] = c.tool_calls;
    } else if (meta.kind == ApiKind::kChat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      choice["text"] = c.text;
    }
    if (meta.return_token_ids) choice["token_ids"] = c.token_ids;
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  return out;
}

json delta_chunk(const ResponseMeta& meta, const protocol::TextDelta& d, size_t text_offset, bool usage_null) {
  json out = base(meta, true);
  json choice = {{"index", d.index}, {"finish_reason", finish_json(d.finish_reason)},
                 {"stop_reason", d.finish_reason.empty() ? json(nullptr) : stop_reason_json(d)},
                 {"logprobs", logprobs_json(meta, d.token_ids, d.logprobs, d.top_logprobs, text_offset)}};
  if (meta.kind == ApiKind::kChat) {
    choice["delta"] = d.text.empty() ? json::object() : json{{"content", d.text}};
  } else {
    choice["text"] = d.text;
  }
  if (meta.return_token_ids) choice["token_ids"] = d.token_ids;
  out["choices"] = json::array({std::move(choice)});
  if (usage_null) out["usage"] = nullptr;
  return out;
}

json chat_chunk(const ResponseMeta& meta, const protocol::TextDelta& d, json delta, bool with_tokens,
                const std::string& finish_reason, bool usage_null) {
  json out = base(meta, true);
  const std::string finish = !with_tokens ? std::string() : finish_reason.empty() ? d.finish_reason : finish_reason;
  json choice = {{"index", d.index}, {"delta", std::move(delta)}, {"finish_reason", finish_json(finish)},
                 {"stop_reason", finish.empty() ? json(nullptr) : stop_reason_json(d)},
                 {"logprobs", with_tokens ? logprobs_json(meta, d.token_ids, d.logprobs, d.top_logprobs, 0) : json(nullptr)}};
  if (meta.return_token_ids) choice["token_ids"] = with_tokens ? json(d.token_ids) : json::array();
  out["choices"] = json::array({std::move(choice)});
  if (usage_null) out["usage"] = nullptr;
  return out;
}

json role_chunk(const ResponseMeta& meta, int index, bool usage_null) {
  json out = base(meta, true);
  out["choices"] = json::array({{{"index", index},
                                 {"delta", {{"role", "assistant"}, {"content", ""}}},
                                 {"logprobs", nullptr},
                                 {"finish_reason", nullptr},
                                 {"stop_reason", nullptr}}});
  if (usage_null) out["usage"] = nullptr;
  return out;
}

json usage_chunk(const ResponseMeta& meta, const Usage& usage) {
  json out = base(meta, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return out;
}

std::string sse_event(const json& payload) {
  // dump's default error handler throws on invalid UTF-8; replace it so a bad byte from the
  // detokenizer cannot end the stream.
  return "data: " + payload.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace zinfer::gateway
