#include "gateway/openai_response.h"

#include <chrono>

namespace zinfer::gateway {
namespace {

using nlohmann::json;

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

json base(const ResponseMeta& meta, bool chunk) {
  return {{"id", meta.id}, {"object", object_name(meta.kind, chunk)}, {"created", meta.created}, {"model", meta.model}};
}

void append_generated(std::vector<LogprobEntry>& out, const std::vector<int32_t>& ids, const std::vector<float>& lps,
                      const std::vector<std::vector<protocol::TopLogprob>>& tops) {
  for (size_t i = 0; i < ids.size(); ++i) {
    LogprobEntry e;
    e.token = ids[i];
    if (i < lps.size()) e.logprob = lps[i];
    if (i < tops.size()) e.alternatives = &tops[i];
    out.push_back(e);
  }
}

json prompt_logprobs_of(const ResponseMeta& meta, const PromptState& prompt, const TokenNaming& naming) {
  if (!meta.prompt_logprobs || !prompt.logprobs) return nullptr;
  return prompt_logprobs_json(prompt.ids, *prompt.logprobs, naming);
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
  m.top_logprobs = request.request.sampling.top_logprobs;
  m.return_token_ids = request.return_token_ids;
  m.as_token_ids = request.return_tokens_as_token_ids;
  m.echo = request.echo;
  m.echo_only = request.echo_only;
  m.prompt_logprobs = request.prompt_logprobs >= 0;
  return m;
}

void PromptState::take(protocol::TextDelta& d, ApiKind kind) {
  if (known) return;
  known = true;
  ids = std::move(d.prompt_token_ids);
  if (text.empty()) text = std::move(d.prompt_text);  // a prompt of token ids: its decoded text
  if (kind == ApiKind::kCompletions) echo_text = text;
  logprobs = std::move(d.prompt_logprobs);
  tokens = d.prompt_tokens;
  cached = d.cached_tokens;
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

json full_response(const ResponseMeta& meta, const std::vector<PromptState>& prompts,
                   const std::vector<ChoiceAccumulator>& choices, int n, const Usage& usage, const TokenNaming& naming) {
  json out = base(meta, false);
  json list = json::array();
  static const PromptState kNoPrompt;
  for (size_t k = 0; k < choices.size(); ++k) {
    const auto& c = choices[k];
    const size_t i = k / static_cast<size_t>(std::max(n, 1));
    const PromptState& prompt = i < prompts.size() ? prompts[i] : kNoPrompt;
    json choice = {{"index", k}, {"finish_reason", finish_json(c.finish_reason)}, {"stop_reason", c.stop_reason}};
    std::vector<LogprobEntry> entries;
    const std::string prefix = meta.echo ? prompt.echo_text : std::string();
    if (meta.kind == ApiKind::kChat) {
      if (meta.want_logprobs) append_generated(entries, c.token_ids, c.logprobs, c.top_logprobs);
      if (!c.tool_calls.is_null()) {  // read for tool calls: the content outside them, and the calls
        choice["message"] = {{"role", "assistant"}, {"content", c.tool_content}};
        if (!c.tool_calls.empty()) choice["message"]["tool_calls"] = c.tool_calls;
      } else {
        choice["message"] = {{"role", "assistant"}, {"content", prefix + c.text}};
      }
      choice["logprobs"] = meta.want_logprobs ? chat_logprobs_json(entries, meta.top_logprobs, naming) : json(nullptr);
      if (meta.return_token_ids) choice["token_ids"] = c.token_ids;
    } else {
      if (meta.want_logprobs) {
        if (meta.echo) entries = prompt_entries(prompt.ids, prompt.logprobs ? &*prompt.logprobs : nullptr);
        if (!meta.echo_only) append_generated(entries, c.token_ids, c.logprobs, c.top_logprobs);
      }
      choice["text"] = prefix + (meta.echo_only ? std::string() : c.text);
      choice["logprobs"] = meta.want_logprobs ? completion_logprobs_json(entries, meta.top_logprobs, 0, naming) : json(nullptr);
      choice["prompt_logprobs"] = prompt_logprobs_of(meta, prompt, naming);
      if (meta.return_token_ids) {
        choice["prompt_token_ids"] = prompt.ids;
        choice["token_ids"] = meta.echo_only ? std::vector<int32_t>() : c.token_ids;
      }
    }
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  if (meta.kind == ApiKind::kChat && !prompts.empty()) {
    // Chat has one prompt: vLLM puts its logprobs and ids on the response, not on each choice.
    if (meta.prompt_logprobs) out["prompt_logprobs"] = prompt_logprobs_of(meta, prompts.front(), naming);
    if (meta.return_token_ids) out["prompt_token_ids"] = prompts.front().ids;
  }
  return out;
}

json chat_chunk(const ResponseMeta& meta, int index, const protocol::TextDelta& d, json delta, bool with_tokens,
                const std::string& finish_reason, const TokenNaming& naming, const json& usage) {
  json out = base(meta, true);
  const std::string finish = !with_tokens ? std::string() : finish_reason.empty() ? d.finish_reason : finish_reason;
  std::vector<LogprobEntry> entries;
  if (with_tokens && meta.want_logprobs) append_generated(entries, d.token_ids, d.logprobs, d.top_logprobs);
  json choice = {{"index", index}, {"delta", std::move(delta)}, {"finish_reason", finish_json(finish)},
                 {"stop_reason", finish.empty() ? json(nullptr) : stop_reason_json(d)},
                 {"logprobs", with_tokens && meta.want_logprobs ? chat_logprobs_json(entries, meta.top_logprobs, naming)
                                                                : json(nullptr)}};
  if (meta.return_token_ids) choice["token_ids"] = with_tokens ? json(d.token_ids) : json::array();
  out["choices"] = json::array({std::move(choice)});
  if (!usage.is_discarded()) out["usage"] = usage;
  return out;
}

std::string streamed_text(const ResponseMeta& meta, const protocol::TextDelta& d) {
  return meta.echo_only ? std::string() : d.text;
}

json delta_chunk(const ResponseMeta& meta, const PromptState& prompt, int index, bool first, size_t text_offset,
                 const protocol::TextDelta& d, const TokenNaming& naming, const json& usage) {
  json out = base(meta, true);
  json choice = {{"index", index}, {"finish_reason", finish_json(d.finish_reason)},
                 {"stop_reason", d.finish_reason.empty() ? json(nullptr) : stop_reason_json(d)}};
  std::vector<LogprobEntry> entries;
  if (meta.kind == ApiKind::kChat) {
    if (meta.want_logprobs) append_generated(entries, d.token_ids, d.logprobs, d.top_logprobs);
    choice["delta"] = d.text.empty() ? json::object() : json{{"content", d.text}};
    choice["logprobs"] = meta.want_logprobs ? chat_logprobs_json(entries, meta.top_logprobs, naming) : json(nullptr);
    if (meta.return_token_ids) choice["token_ids"] = d.token_ids;
  } else {
    const bool echo_now = first && meta.echo;
    if (meta.want_logprobs) {
      if (echo_now) entries = prompt_entries(prompt.ids, prompt.logprobs ? &*prompt.logprobs : nullptr);
      if (!meta.echo_only) append_generated(entries, d.token_ids, d.logprobs, d.top_logprobs);
    }
    choice["text"] = (echo_now ? prompt.echo_text : std::string()) + streamed_text(meta, d);
    choice["logprobs"] = meta.want_logprobs ? completion_logprobs_json(entries, meta.top_logprobs, text_offset, naming)
                                            : json(nullptr);
    if (meta.return_token_ids) {
      choice["token_ids"] = meta.echo_only ? std::vector<int32_t>() : d.token_ids;
      if (first) choice["prompt_token_ids"] = prompt.ids;
    }
  }
  out["choices"] = json::array({std::move(choice)});
  if (!usage.is_discarded()) out["usage"] = usage;
  return out;
}

json role_chunk(const ResponseMeta& meta, int index, const PromptState& prompt, const json& usage) {
  json out = base(meta, true);
  out["choices"] = json::array({{{"index", index},
                                 {"delta", {{"role", "assistant"}, {"content", ""}}},
                                 {"logprobs", nullptr},
                                 {"finish_reason", nullptr},
                                 {"stop_reason", nullptr}}});
  if (meta.return_token_ids) out["prompt_token_ids"] = prompt.ids;
  if (!usage.is_discarded()) out["usage"] = usage;
  return out;
}

json chat_echo_chunk(const ResponseMeta& meta, int index, const std::string& content, const json& usage) {
  json out = base(meta, true);
  out["choices"] = json::array({{{"index", index},
                                 {"delta", {{"content", content}}},
                                 {"logprobs", nullptr},
                                 {"finish_reason", nullptr},
                                 {"stop_reason", nullptr}}});
  if (!usage.is_discarded()) out["usage"] = usage;
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
