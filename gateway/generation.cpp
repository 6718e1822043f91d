#include "gateway/generation.h"

#include <algorithm>
#include <stdexcept>

#include "gateway/api_error.h"
#include "gateway/reasoning/reasoning_response.h"

namespace zinfer::gateway {

Generation::Generation(OpenAiRequest request, std::vector<uint64_t> engine_ids, Metrics& metrics,
                       InFlightLimiter::Token token)
    : req_(std::move(request)),
      ids_(std::move(engine_ids)),
      n_(std::max(1, req_.request.sampling.n)),
      meta_(make_response_meta(req_, ids_.empty() ? 0 : ids_.front())),
      token_(std::move(token)) {
  if (ids_.empty()) throw std::invalid_argument("a generation needs an engine request id");
  prompts_.resize(ids_.size());
  for (size_t i = 0; i < prompts_.size(); ++i) {
    if (i < req_.prompts.size()) prompts_[i].text = req_.prompts[i].text;
  }
  if (req_.kind == ApiKind::kChat && req_.echo && !req_.request.messages.empty()) {
    // vLLM's chat echo: the last message's content, when its role is the response's (the
    // assistant's, or with add_generation_prompt false the last message's own).
    const auto& last = req_.request.messages.back();
    if (!req_.request.add_generation_prompt || last.role == "assistant") prompts_.front().echo_text = last.content;
  }
  choices_.resize(prompts_.size() * static_cast<size_t>(n_));
  naming_.texts = &texts_;
  naming_.as_token_ids = req_.return_tokens_as_token_ids;
  timers_.reserve(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) timers_.emplace_back(metrics, n_, req_.request.arrival_ns);
  const auto& mode = req_.reasoning;
  if (mode.active() && req_.stream) {
    reasoning_.assign(choices_.size(), reasoning::ReasoningStream(*mode.parser, mode.starts_inside));
  }
  if (req_.tools.parser) {
    for (size_t i = 0; i < choices_.size(); ++i) tool_streams_.emplace_back(*req_.tools.parser, req_.tools.max_calls());
  }
}

nlohmann::json Generation::response_body() const {
  nlohmann::json body = full_response(meta_, prompts_, choices_, n_, usage(), naming_);
  const auto& mode = req_.reasoning;
  if (mode.active()) {
    const std::string& echo = meta_.echo ? prompts_.front().echo_text : std::string();
    for (size_t i = 0; i < choices_.size(); ++i) {
      reasoning::ReasoningParts parts = reasoning::split_reasoning(*mode.parser, mode.starts_inside, choices_[i].text);
      // A choice read for tool calls already has its content: the content part outside the calls.
      if (!choices_[i].tool_calls.is_null()) {
        parts.content = choices_[i].tool_content.is_string() ? choices_[i].tool_content.get<std::string>() : std::string();
      } else {
        parts.content = echo + parts.content;
      }
      reasoning::put_reasoning_message(body["choices"][i]["message"], parts, mode.include);
    }
  }
  return body;
}

reasoning::ReasoningParts Generation::split_delta(size_t choice, const protocol::TextDelta& d) {
  if (reasoning_.empty()) return reasoning::ReasoningParts{"", d.text};
  auto& stream = reasoning_[choice];
  reasoning::ReasoningParts parts = stream.push(d.text);
  if (!d.finish_reason.empty()) {
    reasoning::ReasoningParts tail = stream.finish();
    parts.reasoning += tail.reasoning;
    parts.content += tail.content;
  }
  return parts;
}

bool Generation::owns(uint64_t engine_id) const { return std::find(ids_.begin(), ids_.end(), engine_id) != ids_.end(); }

protocol::GenerateRequest Generation::engine_request(size_t index) const {
  protocol::GenerateRequest r = request_for(req_, index);
  r.request_id = ids_.at(index);
  return r;
}

Generation::Reaction Generation::on_event(uint64_t engine_id, const EngineEvent& event) {
  if (over_) return {};
  if (const auto* reply = std::get_if<protocol::ErrorReply>(&event)) {
    ApiError err = api_error_from_reply(*reply);
    return on_error(err.status(), err.to_json());
  }
  const auto it = std::find(ids_.begin(), ids_.end(), engine_id);
  if (it == ids_.end()) return {};
  protocol::TextDelta d = std::get<protocol::TextDelta>(event);
  return on_delta(static_cast<size_t>(it - ids_.begin()), d);
}

Usage Generation::usage() const {
  Usage u;
  for (const auto& p : prompts_) {
    u.prompt_tokens += p.tokens;
    u.cached_tokens += p.cached;
  }
  for (const auto& c : choices_) u.completion_tokens += c.completion_tokens;
  return u;
}

// stream_options: usage null in every chunk with include_usage; with continuous_usage_stats the
// usage so far of the chunk's choice (vLLM's: its prompt and its tokens); else no usage key.
nlohmann::json Generation::chunk_usage(size_t prompt, const ChoiceAccumulator& choice) const {
  if (!req_.include_usage) return nlohmann::json(nlohmann::json::value_t::discarded);
  if (!req_.continuous_usage) return nullptr;
  Usage u;
  u.prompt_tokens = prompts_[prompt].tokens;
  u.completion_tokens = choice.completion_tokens;
  return usage_json(u);
}

Generation::Reaction Generation::on_delta(size_t p, protocol::TextDelta& d) {
  if (d.index < 0 || d.index >= n_) {
    ApiError err(500, "the engine sent sample index " + std::to_string(d.index) + " for a request with n=" +
                          std::to_string(n_));
    return on_error(err.status(), err.to_json());
  }
  const size_t k = p * static_cast<size_t>(n_) + static_cast<size_t>(d.index);
  ChoiceAccumulator& choice = choices_[k];
  if (choice.finished()) return {};  // nothing may follow a sample's last delta
  PromptState& prompt = prompts_[p];
  prompt.take(d, req_.kind);
  for (auto& [id, text] : d.token_texts) texts_.emplace(id, std::move(text));
  const bool first = !choice.started;
  choice.add(d);
  timers_[p].on_delta(d);
  // Reasoning first (reasoning_content), then the content part: text, or read for tool calls.
  const reasoning::ReasoningParts parts = req_.stream ? split_delta(k, d) : reasoning::ReasoningParts{};
  ToolCallStream* tools = tool_streams_.empty() ? nullptr : &tool_streams_[k];
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
  const bool all_done = finished_count_ == choices_.size();

  Reaction r;
  if (all_done) {
    over_ = true;
    r.finished = true;
    for (auto& t : timers_) t.finish();
  }
  if (!req_.stream) {
    if (all_done) {
      r.kind = Reaction::Kind::kBody;
      r.data = response_body().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return r;
  }
  r.kind = Reaction::Kind::kStream;
  const int index = static_cast<int>(k);
  if (meta_.kind == ApiKind::kChat) {
    if (!stream_started_) {
      for (size_t i = 0; i < choices_.size(); ++i) {
        r.data += sse_event(role_chunk(meta_, static_cast<int>(i), prompt, chunk_usage(p, choices_[i])));
      }
    }
    if (first && !prompt.echo_text.empty()) {
      r.data += sse_event(chat_echo_chunk(meta_, index, prompt.echo_text, chunk_usage(p, choice)));
    }
  }
  stream_started_ = true;
  const bool include_reasoning = req_.reasoning.include;
  const std::string text = streamed_text(meta_, d);
  const bool echo_now = first && meta_.echo && req_.kind == ApiKind::kCompletions;
  if (tools) {
    // Tool deltas replace the content; the reasoning part goes first; the last chunk of this
    // delta carries its tokens and finish. Text held back (a tag arriving) sends no chunk unless
    // the client wants each token's data.
    if (include_reasoning && !parts.reasoning.empty()) {
      tool_deltas.insert(tool_deltas.begin(), nlohmann::json{{"reasoning_content", parts.reasoning}});
    }
    const bool per_token = req_.want_logprobs || req_.return_token_ids;
    if (tool_deltas.empty() && ((per_token && !d.token_ids.empty()) || !d.finish_reason.empty())) {
      tool_deltas.push_back(nlohmann::json::object());
    }
    const std::string finish = choice.finished() ? choice.finish_reason : std::string();
    for (size_t i = 0; i < tool_deltas.size(); ++i) {
      r.data += sse_event(chat_chunk(meta_, index, d, std::move(tool_deltas[i]), i + 1 == tool_deltas.size(), finish,
                                     naming_, chunk_usage(p, choice)));
    }
  } else if (!text.empty() || !d.token_ids.empty() || !d.finish_reason.empty() || echo_now) {
    nlohmann::json chunk = delta_chunk(meta_, prompt, index, first, choice.characters, d, naming_, chunk_usage(p, choice));
    if (!reasoning_.empty()) reasoning::put_reasoning_delta(chunk["choices"][0]["delta"], parts, include_reasoning);
    r.data += sse_event(chunk);
    if (echo_now) choice.characters += text_characters(prompt.echo_text);
    choice.characters += text_characters(text);
  }
  choice.started = true;
  if (all_done) {
    if (req_.include_usage) r.data += sse_event(usage_chunk(meta_, usage()));
    r.data += kSseDone;
  }
  if (r.data.empty()) r.kind = Reaction::Kind::kNone;
  return r;
}

Generation::Reaction Generation::on_error(int status, const nlohmann::json& error) {
  over_ = true;
  for (auto& t : timers_) t.fail(status);
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
  for (auto& t : timers_) t.finish();
}

}  // namespace zinfer::gateway
