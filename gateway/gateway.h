// The whole gateway: the OpenAI HTTP server and the ZeroMQ client endpoint in front of one
// EngineClient, sharing request ids (unique across both) and metrics (/metrics covers both).
#pragma once

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

  HttpServer* http() { return http_.get(); }
  ZmqEndpoint* zmq() { return zmq_.get(); }
  Metrics& metrics() { return *metrics_; }

 private:
  std::shared_ptr<Metrics> metrics_;
  std::shared_ptr<RequestIds> ids_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<ZmqEndpoint> zmq_;
};

}  // namespace zinfer::gateway
