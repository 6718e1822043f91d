#include "fake_engine.h"

#include <algorithm>

namespace zinfer::gateway::testing {

FakeEngine::FakeEngine(std::chrono::milliseconds tick) : tick_(tick), thread_([this] { run(); }) {}

FakeEngine::~FakeEngine() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FakeEngine::submit(protocol::GenerateRequest request, DeltaSink sink) {
  Stream s;
  s.prompt_tokens = static_cast<int32_t>(request.prompt.size() + request.prompt_ids.size());
  std::string all_text = request.prompt;
  for (const auto& m : request.messages) {
    s.prompt_tokens += static_cast<int32_t>(m.content.size());
    all_text += m.content;
  }
  s.hang = all_text.find("HANG") != std::string::npos;
  s.breaks = all_text.find("BREAK") != std::string::npos;
  s.produced.assign(request.sampling.n, 0);
  bool too_long = all_text.find("TOO_LONG") != std::string::npos;
  uint64_t id = request.request_id;
  {
    std::lock_guard lock(mu_);
    submitted_.push_back(request);
  }
  if (too_long) {
    protocol::ErrorReply reply;
    reply.request_id = id;
    reply.code = 400;
    reply.kind = "invalid_request";
    reply.message = "the prompt is longer than the model's context";
    sink(reply);
    return;
  }
  s.request = std::move(request);
  s.sink = std::move(sink);
  std::lock_guard lock(mu_);
  streams_.emplace(id, std::move(s));
  cv_.notify_all();
}

void FakeEngine::abort(uint64_t request_id) {
  std::lock_guard lock(mu_);
  streams_.erase(request_id);
  aborted_.insert(request_id);
  cv_.notify_all();
}

void FakeEngine::tokenize(protocol::TokenizeRequest request, TokenizeSink sink) {
  {
    std::lock_guard lock(mu_);
    tokenize_calls_.push_back(request);
  }
  protocol::TokenizeReply reply;
  reply.request_id = request.request_id;
  reply.max_model_len = 100;
  if (request.detokenize) {
    for (int32_t id : request.tokens) {
      if (id > 255) {
        sink(protocol::ErrorReply{request.request_id, 400, "invalid_request", "token id " + std::to_string(id) +
                                                                                  " is outside the vocabulary"});
        return;
      }
      reply.text += static_cast<char>(id);
    }
    sink(std::move(reply));
    return;
  }
  std::string text = request.prompt;
  for (const auto& m : request.messages) text += m.role + ":" + m.content + "\n";
  if (request.add_special_tokens == 1) text = "^" + text;
  for (unsigned char c : text) {
    reply.tokens.push_back(c);
    if (request.return_token_strs) reply.token_strs.push_back(std::string(1, static_cast<char>(c)));
  }
  sink(std::move(reply));
}

std::vector<protocol::TokenizeRequest> FakeEngine::tokenize_calls() {
  std::lock_guard lock(mu_);
  return tokenize_calls_;
}

protocol::Stats FakeEngine::stats() {
  std::lock_guard lock(mu_);
  return stats_;
}

void FakeEngine::set_stats(const protocol::Stats& stats) {
  std::lock_guard lock(mu_);
  stats_ = stats;
}

std::vector<protocol::GenerateRequest> FakeEngine::submitted() {
  std::lock_guard lock(mu_);
  return submitted_;
}

std::set<uint64_t> FakeEngine::aborted() {
  std::lock_guard lock(mu_);
  return aborted_;
}

size_t FakeEngine::active() {
  std::lock_guard lock(mu_);
  return streams_.size();
}

bool FakeEngine::wait_aborted(uint64_t request_id, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return aborted_.count(request_id) > 0; });
}

bool FakeEngine::wait_submitted(size_t count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return submitted_.size() >= count; });
}

std::string FakeEngine::fake_token_text(int32_t id) {
  if (id >= 0 && id < 256) return std::string(1, static_cast<char>(id));
  if (id >= 1000) return token_text((id - 1000) / 100, (id - 1000) % 100);
  return "x" + std::to_string(id);
}

namespace {

// The prompt part of a request's first delta (see fake_engine.h).
void add_prompt(const protocol::GenerateRequest& r, protocol::TextDelta& d) {
  const auto& sp = r.sampling;
  if (!sp.return_prompt && sp.prompt_logprobs < 0) return;
  if (!r.prompt_ids.empty()) {
    d.prompt_token_ids = r.prompt_ids;
    for (int32_t id : r.prompt_ids) d.prompt_text += FakeEngine::fake_token_text(id);
  } else {
    std::string text = r.prompt;
    for (const auto& m : r.messages) text += m.content;
    for (unsigned char c : text) d.prompt_token_ids.push_back(c);
    d.prompt_text = text;
  }
  if (sp.prompt_logprobs >= 0) {
    protocol::PromptLogprobs lp;
    lp.id = r.request_id;
    lp.first_position = 1;
    for (size_t p = 1; p < d.prompt_token_ids.size(); ++p) {
      lp.logprobs.push_back(-0.5f * static_cast<float>(p));
      lp.ranks.push_back(static_cast<int32_t>(p));
      std::vector<protocol::TopLogprob> top;
      for (int a = 0; a < sp.prompt_logprobs; ++a) top.push_back({500 + a, -0.1f * static_cast<float>(a + 1)});
      lp.top_logprobs.push_back(std::move(top));
    }
    d.prompt_logprobs = std::move(lp);
  }
}

}  // namespace

bool FakeEngine::step(uint64_t id, Stream& s, std::vector<std::pair<DeltaSink*, EngineEvent>>& out) {
  const auto& sp = s.request.sampling;
  bool any_running = false;
  for (int i = 0; i < static_cast<int>(s.produced.size()); ++i) {
    int k = s.produced[i];
    if (!s.hang && k >= sp.max_tokens) continue;
    if (s.breaks && k == 2) {
      protocol::ErrorReply reply;
      reply.request_id = id;
      reply.code = 500;
      reply.kind = "executor";
      reply.message = "the executor failed";
      out.emplace_back(&s.sink, reply);
      return false;
    }
    protocol::TextDelta d;
    d.request_id = id;
    d.index = i;
    d.text = token_text(i, k);
    d.token_ids = {token_id(i, k)};
    if (sp.logprobs) {
      d.logprobs = {-0.25f * static_cast<float>(k + 1)};
      std::vector<protocol::TopLogprob> top;
      for (int j = 0; j < sp.top_logprobs; ++j) top.push_back({token_id(i, k) + j, -0.25f * (k + 1) - j});
      d.top_logprobs = {top};
    }
    d.prompt_tokens = s.prompt_tokens;
    d.completion_tokens = k + 1;
    if (!s.prompt_sent) {
      s.prompt_sent = true;
      add_prompt(s.request, d);
      d.scheduled_ns = s.request.arrival_ns;  // scheduled on arrival: no queue time
    }
    if (sp.logprobs || d.prompt_logprobs) {
      auto name = [&](int32_t t) { d.token_texts.emplace(t, fake_token_text(t)); };
      for (int32_t t : d.token_ids) name(t);
      for (const auto& alternatives : d.top_logprobs) for (const auto& t : alternatives) name(t.token);
      if (d.prompt_logprobs) {
        for (int32_t t : d.prompt_token_ids) name(t);
        for (const auto& alternatives : d.prompt_logprobs->top_logprobs) for (const auto& t : alternatives) name(t.token);
      }
    }
    s.produced[i] = k + 1;
    const auto& stops = sp.stop_token_ids;
    if (std::find(stops.begin(), stops.end(), token_id(i, k)) != stops.end()) {
      // As the detokenizer reports a stop token (vLLM's stop_reason): its text left out.
      d.finish_reason = "stop";
      d.stop_token = token_id(i, k);
      if (!sp.include_stop_str_in_output) d.text.clear();
      s.produced[i] = sp.max_tokens;  // this sample is over
    } else if (!s.hang && k + 1 >= sp.max_tokens) {
      d.finish_reason = "length";
    } else {
      any_running = true;
    }
    out.emplace_back(&s.sink, std::move(d));
  }
  return any_running;
}

void FakeEngine::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, tick_, [&] { return stop_; });
    if (stop_) break;
    // Sinks are called with the lock held: they only post to the gateway, and holding it keeps
    // an abort from racing with a stream's deltas.
    std::vector<std::pair<DeltaSink*, EngineEvent>> out;
    std::vector<uint64_t> ended;
    for (auto& [id, s] : streams_) {
      size_t first = out.size();
      if (!step(id, s, out)) ended.push_back(id);
      for (size_t j = first; j < out.size(); ++j) (*out[j].first)(std::move(out[j].second));
    }
    for (uint64_t id : ended) streams_.erase(id);
  }
}

}  // namespace zinfer::gateway::testing
