#include "gateway/generation.h"

#include "gateway/api_error.h"
#include "gateway/reasoning/reasoning_response.h"

namespace zinfer::gateway {

Generation::Generation(OpenAiRequest request, uint64_t request_id, Metrics& metrics, InFlightLimiter::Token token)
    : req_(std::move(request)),
      id_(request_id),
      meta_(make_response_meta(req_, request_id)),
      choices_(static_cast<size_t>(std::max(1, req_.request.sampling.n))),
      timer_(metrics, req_.request.sampling.n),
      token_(std::move(token)) {
  const auto& mode = req_.reasoning;
  if (mode.active() && req_.stream) {
    reasoning_.assign(choices_.size(), reasoning::ReasoningStream(*mode.parser, mode.starts_inside));
  }
  if (req_.tools.parser) {
    for (size_t i = 0; i < choices_.size(); ++i) tool_streams_.emplace_back(*req_.tools.parser, req_.tools.max_calls());
  }
}

nlohmann::json Generation::response_body() const {
  nlohmann::json body = full_response(meta_, choices_, usage());
  const auto& mode = req_.reasoning;
  if (mode.active()) {
    for (size_t i = 0; i < choices_.size(); ++i) {
      reasoning::ReasoningParts parts = reasoning::split_reasoning(*mode.parser, mode.starts_inside, choices_[i].text);
      // A choice read for tool calls already has its content: the content part outside the calls.
      if (!choices_[i].tool_calls.is_null()) parts.content = choices_[i].tool_content.is_string()
                                                                  ? choices_[i].tool_content.get<std::string>()
                                                                  : std::string();
      reasoning::put_reasoning_message(body["choices"][i]["message"], parts, mode.include);
    }
  }
  return body;
}

reasoning::ReasoningParts Generation::split_delta(const protocol::TextDelta& d) {
  if (reasoning_.empty()) return reasoning::ReasoningParts{"", d.text};
  auto& stream = reasoning_[d.index];
  reasoning::ReasoningParts parts = stream.push(d.text);
  if (!d.finish_reason.empty()) {
    reasoning::ReasoningParts tail = stream.finish();
    parts.reasoning += tail.reasoning;
    parts.content += tail.content;
  }
  return parts;
}

Generation::Reaction Generation::on_event(const EngineEvent& event) {
  if (over_) return {};
  if (const auto* reply = std::get_if<protocol::ErrorReply>(&event)) {
    ApiError err = api_error_from_reply(*reply);
    return on_error(err.status(), err.to_json());
  }
  return on_delta(std::get<protocol::TextDelta>(event));
}

Usage Generation::usage() const {
  Usage u;
  u.prompt_tokens = timer_.prompt_tokens();
  u.cached_tokens = timer_.cached_tokens();
  for (const auto& c : choices_) u.completion_tokens += c.completion_tokens;
  return u;
}

Generation::Reaction Generation::on_delta(const protocol::TextDelta& d) {
  if (d.index < 0 || static_cast<size_t>(d.index) >= choices_.size()) {
    ApiError err(500, "the engine sent sample index " + std::to_string(d.index) + " for a request with n=" +
                          std::to_string(choices_.size()));
    return on_error(err.status(), err.to_json());
  }
  ChoiceAccumulator& choice = choices_[d.index];
  if (choice.finished()) return {};  // nothing may follow a sample's last delta
  size_t offset = choice.text.size();
  choice.add(d);
  timer_.on_delta(d);
  // Reasoning first (reasoning_content), then the content part: text, or read for tool calls.
  const reasoning::ReasoningParts parts = req_.stream ? split_delta(d) : reasoning::ReasoningParts{};
  ToolCallStream* tools = tool_streams_.empty() ? nullptr : &tool_streams_[d.index];
  std::vector<nlohmann::json> tool_deltas;
  if (tools && req_.stream) tool_deltas = tools->feed(parts.content);
  if (choice.finished()) {
    ++finished_count_;
    if (tools) {
      if (!req_.stream) {  // read once, whole: the content part of the text
        const auto& mode = req_.reasoning;
        tools->feed(mode.active() ? reasoning::split_reasoning(*mode.parser, mode.starts_inside, choice.text).content
                                  : choice.text);
      }
      for (auto& delta : tools->finish()) tool_deltas.push_back(std::move(delta));
      choice.tool_content = tools->content();
      choice.tool_calls = tools->tool_calls();
      if (tools->called()) choice.finish_reason = "tool_calls";
    }
  }
  bool all_done = finished_count_ == choices_.size();

  Reaction r;
  if (all_done) {
    over_ = true;
    r.finished = true;
    timer_.finish();
  }
  if (!req_.stream) {
    if (all_done) {
      r.kind = Reaction::Kind::kBody;
      r.data = response_body().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return r;
  }
  r.kind = Reaction::Kind::kStream;
  if (!stream_started_) {
    stream_started_ = true;
    if (meta_.kind == ApiKind::kChat) {
      for (size_t i = 0; i < choices_.size(); ++i) r.data += sse_event(role_chunk(meta_, static_cast<int>(i), req_.include_usage));
    }
  }
  const bool include_reasoning = req_.reasoning.include;
  if (tools) {
    // Tool deltas replace the content; the reasoning part goes first; the last chunk of this
    // delta carries its tokens and finish.
    if (include_reasoning && !parts.reasoning.empty()) {
      tool_deltas.insert(tool_deltas.begin(), nlohmann::json{{"reasoning_content", parts.reasoning}});
    }
    if (tool_deltas.empty() && (!d.token_ids.empty() || !d.finish_reason.empty())) {
      tool_deltas.push_back(nlohmann::json::object());
    }
    const std::string finish = choice.finished() ? choice.finish_reason : std::string();
    for (size_t k = 0; k < tool_deltas.size(); ++k) {
      r.data += sse_event(chat_chunk(meta_, d, std::move(tool_deltas[k]), k + 1 == tool_deltas.size(), finish,
                                     req_.include_usage));
    }
  } else if (!d.text.empty() || !d.token_ids.empty() || !d.finish_reason.empty()) {
    nlohmann::json chunk = delta_chunk(meta_, d, offset, req_.include_usage);
    if (!reasoning_.empty()) reasoning::put_reasoning_delta(chunk["choices"][0]["delta"], parts, include_reasoning);
    r.data += sse_event(chunk);
  }
  if (all_done) {
    if (req_.include_usage) r.data += sse_event(usage_chunk(meta_, usage()));
    r.data += kSseDone;
  }
  if (r.data.empty()) r.kind = Reaction::Kind::kNone;
  return r;
}

Generation::Reaction Generation::on_error(int status, const nlohmann::json& error) {
  over_ = true;
  timer_.fail(status);
  Reaction r;
  r.finished = true;
  r.status = status;
  if (stream_started_) {
    // The 200 and part of the stream are already out: the error travels as the last event.
    r.kind = Reaction::Kind::kStream;
    r.data = sse_event(error) + kSseDone;
  } else {
    r.kind = Reaction::Kind::kError;
    r.data = error.dump();
  }
  return r;
}

void Generation::abandon() {
  if (over_) return;
  over_ = true;
  timer_.finish();
}

}  // namespace zinfer::gateway
