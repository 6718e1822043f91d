// The whole gateway: the OpenAI HTTP server and the ZeroMQ client endpoint in front of one
// EngineClient, sharing request ids (unique across both) and metrics (/metrics covers both).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "gateway/http_server.h"
#include "gateway/options.h"
#include "gateway/zmq_endpoint.h"

namespace zinfer::gateway {

class Gateway {
 public:
  // engine (and context, when given) must outlive the gateway.
  Gateway(EngineClient& engine, GatewayOptions options, zmq::context_t* context = nullptr)
      : metrics_(std::make_shared<Metrics>()), ids_(std::make_shared<RequestIds>()) {
    grace_ = std::chrono::seconds(options.shutdown_grace_s);
    if (options.enable_http) http_ = std::make_unique<HttpServer>(engine, options.http, metrics_, ids_);
    if (options.enable_zmq) zmq_ = std::make_unique<ZmqEndpoint>(engine, options.zmq, metrics_, ids_, context);
  }

  // Throws std::runtime_error naming the address that could not be bound.
  void start() {
    if (http_) http_->start();
    if (zmq_) zmq_->start();
  }
  void stop() {
    if (zmq_) zmq_->stop();
    if (http_) http_->stop();
  }

  // What a graceful shutdown did.
  struct DrainSummary {
    int64_t in_flight = 0;  // requests in flight when it began
    int64_t ended = 0;      // those still unfinished after the grace period, ended with an error
    std::chrono::milliseconds took{0};
  };
  // Graceful shutdown: new requests get 503 at once, requests in flight get the grace period
  // ([server] shutdown_grace_s) to finish, and the rest end with an error (an SSE error event and
  // [DONE], a 503, or an ErrorReply 503 "shutdown"); then stop(). `pump` must deliver the
  // engine's events for about the time it is given (the caller's thread reads them).
  DrainSummary drain(const std::function<void(std::chrono::milliseconds)>& pump) {
    const auto start = std::chrono::steady_clock::now();
    auto in_flight = [&] {
      return (http_ ? static_cast<int64_t>(http_->in_flight()) : 0) + (zmq_ ? zmq_->in_flight() : 0);
    };
    if (http_) http_->begin_drain();
    if (zmq_) zmq_->begin_drain();
    DrainSummary summary;
    summary.in_flight = in_flight();
    const auto deadline = start + grace_;
    while (in_flight() > 0 && std::chrono::steady_clock::now() < deadline) pump(std::chrono::milliseconds(10));
    summary.ended = in_flight();
    if (http_) http_->fail_in_flight("the server shut down before the request finished", std::chrono::seconds(2));
    stop();
    summary.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    return summary;
  }

  HttpServer* http() { return http_.get(); }
  ZmqEndpoint* zmq() { return zmq_.get(); }
  Metrics& metrics() { return *metrics_; }

 private:
  std::shared_ptr<Metrics> metrics_;
  std::shared_ptr<RequestIds> ids_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<ZmqEndpoint> zmq_;
  std::chrono::milliseconds grace_{0};
};

}  // namespace zinfer::gateway
