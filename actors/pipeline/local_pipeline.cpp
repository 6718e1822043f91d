#include "actors/pipeline/local_pipeline.h"

#include <atomic>
#include <mutex>

#include "actors/pipeline/registry.h"

namespace zinfer::actors {

namespace {
std::atomic<uint64_t> g_instances{0};
}

LocalPipeline::LocalPipeline(EngineConfig config) : config_(std::move(config)) {
  const std::string tag = "inproc://zinfer-local-" + std::to_string(g_instances++) + "-";
  config_.endpoints.tokenizer = tag + "tokenizer";
  config_.endpoints.scheduler = tag + "scheduler";
  config_.endpoints.executor = tag + "executor";
  config_.endpoints.detokenizer = tag + "detokenizer";
  config_.endpoints.gateway = tag + "gateway";
  // The client binds the events endpoint before any actor connects to it.
  client_ = std::make_unique<ZmqEngineClient>(config_.endpoints);
  register_pipeline_actors(supervisor_, config_);
  supervisor_.start_threads({"executor", "detokenizer", "scheduler", "tokenizer"});
}

LocalPipeline::~LocalPipeline() {
  supervisor_.stop_threads();
  client_.reset();
}

std::vector<RequestResult> LocalPipeline::run(std::vector<protocol::GenerateRequest> requests,
                                              const std::function<void(size_t, const gateway::EngineEvent&)>& on_event) {
  std::vector<RequestResult> results(requests.size());
  // Sinks run on this thread (inside dispatch below), so plain counters suffice.
  size_t open = requests.size();
  for (size_t i = 0; i < requests.size(); ++i) {
    auto& req = requests[i];
    req.request_id = next_id_++;
    results[i].samples.resize(static_cast<size_t>(std::max<int32_t>(1, req.sampling.n)));
    auto remaining = std::make_shared<int32_t>(std::max<int32_t>(1, req.sampling.n));
    client_->submit(req, [&, i, remaining](gateway::EngineEvent event) {
      if (on_event) on_event(i, event);
      if (auto* d = std::get_if<protocol::TextDelta>(&event)) {
        auto& s = results[i].samples.at(static_cast<size_t>(d->index));
        s.token_ids.insert(s.token_ids.end(), d->token_ids.begin(), d->token_ids.end());
        s.logprobs.insert(s.logprobs.end(), d->logprobs.begin(), d->logprobs.end());
        s.text += d->text;
        s.prompt_tokens = d->prompt_tokens;
        s.cached_tokens = d->cached_tokens;
        if (!d->finish_reason.empty()) {
          s.finish_reason = d->finish_reason;
          if (--*remaining == 0) --open;
        }
      } else {
        auto& e = std::get<protocol::ErrorReply>(event);
        results[i].error = e.message;
        results[i].error_code = e.code;
        if (*remaining > 0) {
          *remaining = 0;
          --open;
        }
      }
    });
  }
  zmq::pollitem_t item{client_->events_socket().handle(), 0, ZMQ_POLLIN, 0};
  while (open > 0) {
    zmq::poll(&item, 1, std::chrono::milliseconds(1000));
    if (item.revents & ZMQ_POLLIN) client_->dispatch();
    if (!supervisor_.all_alive()) throw std::runtime_error("an actor of the pipeline stopped");
  }
  return results;
}

}  // namespace zinfer::actors
