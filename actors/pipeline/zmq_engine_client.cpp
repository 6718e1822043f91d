#include "actors/pipeline/zmq_engine_client.h"

#include <chrono>

#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/logging.h"
#include "runtime/messaging.h"

namespace zinfer::actors {

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ZmqEngineClient::ZmqEngineClient(const runtime::EndpointsConfig& endpoints)
    : to_tokenizer_(runtime::zmq_context(), zmq::socket_type::push),
      to_scheduler_(runtime::zmq_context(), zmq::socket_type::push),
      events_(runtime::zmq_context(), zmq::socket_type::pull) {
  runtime::configure_pipeline_socket(to_tokenizer_);
  runtime::configure_pipeline_socket(to_scheduler_);
  runtime::configure_pipeline_socket(events_);
  events_.bind(endpoints.gateway);
  to_tokenizer_.connect(endpoints.tokenizer);
  to_scheduler_.connect(endpoints.scheduler);
}

void ZmqEngineClient::submit(protocol::GenerateRequest request, gateway::DeltaSink sink) {
  std::lock_guard lock(mutex_);
  if (request.arrival_ns == 0) request.arrival_ns = now_ns();
  pending_[request.request_id] = Pending{std::move(sink), std::max<int32_t>(1, request.sampling.n), 0};
  runtime::send_message(to_tokenizer_, request);
}

void ZmqEngineClient::abort(uint64_t request_id) {
  std::lock_guard lock(mutex_);
  pending_.erase(request_id);
  runtime::send_message(to_scheduler_, protocol::Abort{request_id, "abort", -1});
}

void ZmqEngineClient::tokenize(protocol::TokenizeRequest request, gateway::TokenizeSink sink) {
  std::lock_guard lock(mutex_);
  tokenize_calls_[request.request_id] = std::move(sink);
  runtime::send_message(to_tokenizer_, request);
}

protocol::Stats ZmqEngineClient::stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

bool ZmqEngineClient::healthy() {
  std::lock_guard lock(mutex_);
  // The scheduler reports every 100 ms; silence for 5 s means the pipeline is stuck or gone.
  return peers_down_.empty() && last_stats_ns_ != 0 && now_ns() - last_stats_ns_ < 5'000'000'000ll;
}

void ZmqEngineClient::dispatch() {
  for (int i = 0; i < 4096; ++i) {
    auto frame = runtime::recv_frame(events_, true);
    if (!frame) return;
    try {
      protocol::Frame f = protocol::open(*frame);
      if (f.type() == protocol::MessageType::kStats) {
        auto s = f.as<protocol::Stats>();
        std::lock_guard lock(mutex_);
        stats_ = s;
        last_stats_ns_ = now_ns();
        continue;
      }
      if (f.type() == protocol::MessageType::kTokenizeReply) {
        auto reply = f.as<protocol::TokenizeReply>();
        gateway::TokenizeSink sink;
        {
          std::lock_guard lock(mutex_);
          auto it = tokenize_calls_.find(reply.request_id);
          if (it == tokenize_calls_.end()) continue;
          sink = std::move(it->second);
          tokenize_calls_.erase(it);
        }
        sink(std::move(reply));
        continue;
      }
      gateway::DeltaSink sink;
      gateway::TokenizeSink tokenize_sink;
      gateway::EngineEvent event;
      {
        std::lock_guard lock(mutex_);
        if (f.type() == protocol::MessageType::kTextDelta) {
          auto d = f.as<protocol::TextDelta>();
          auto it = pending_.find(d.request_id);
          if (it == pending_.end()) continue;  // aborted by the gateway: late events are dropped
          sink = it->second.sink;
          if (!d.finish_reason.empty() && ++it->second.finished >= it->second.samples) pending_.erase(it);
          event = std::move(d);
        } else if (f.type() == protocol::MessageType::kErrorReply) {
          auto e = f.as<protocol::ErrorReply>();
          auto it = pending_.find(e.request_id);
          if (auto call = tokenize_calls_.find(e.request_id); call != tokenize_calls_.end()) {
            tokenize_sink = std::move(call->second);
            tokenize_calls_.erase(call);
          } else if (it == pending_.end()) {
            // After an actor's restart the scheduler fails what it held, which the gateway has
            // failed already (on_peer_notice).
            if (e.kind != "actor_restarted") {
              runtime::logger("gateway")->warn("pipeline error for no known request: {}", e.message);
            }
            continue;
          }
          if (tokenize_sink) {
            event = std::move(e);
          } else {
            sink = std::move(it->second.sink);
            pending_.erase(it);
            event = std::move(e);
          }
        } else {
          continue;
        }
      }
      // Outside the lock: a sink hands the event to its connection.
      if (tokenize_sink) {
        tokenize_sink(std::get<protocol::ErrorReply>(std::move(event)));
      } else {
        sink(std::move(event));
      }
    } catch (const protocol::ProtocolError& e) {
      runtime::logger("gateway")->warn("bad frame from the pipeline: {}", e.what());
    }
  }
}

}  // namespace zinfer::actors
