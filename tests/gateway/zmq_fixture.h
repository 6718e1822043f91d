// A ZmqEndpoint on an ephemeral tcp port in front of a FakeEngine, and a DEALER client helper.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include <gtest/gtest.h>
#include <zmq.hpp>

#include "fake_engine.h"
#include "gateway/zmq_endpoint.h"
#include "protocol/envelope.h"

namespace zinfer::gateway::testing {

class ZmqClient {
 public:
  ZmqClient(zmq::context_t& ctx, const std::string& endpoint,
            const std::function<void(zmq::socket_t&)>& configure = nullptr)
      : socket_(ctx, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    if (configure) configure(socket_);  // options that must precede connect (CURVE keys)
    socket_.connect(endpoint);
  }

  void send_raw(const std::string& bytes) { socket_.send(zmq::buffer(bytes), zmq::send_flags::none); }
  template <class T>
  void send(const T& msg) {
    send_raw(protocol::encode(msg));
  }

  // The next frame, or nullopt after `timeout` (a test failure, reported by the caller).
  std::optional<protocol::Frame> receive(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
    zmq::message_t msg;
    (void)socket_.recv(msg, zmq::recv_flags::none);
    return protocol::open(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
  }

  zmq::socket_t& socket() { return socket_; }

 private:
  zmq::socket_t socket_;
};

class ZmqEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<FakeEngine>();
    ZmqEndpointOptions o;
    o.bind = "tcp://127.0.0.1:*";
    o.served_model_name = "test-model";
    o.max_model_len = 4096;
    o.max_in_flight = 8;
    endpoint_ = std::make_unique<ZmqEndpoint>(*engine_, o);
    endpoint_->start();
  }
  void TearDown() override {
    endpoint_.reset();
    engine_.reset();
  }

  static protocol::GenerateRequest request(uint64_t id, const std::string& prompt, int max_tokens) {
    protocol::GenerateRequest r;
    r.request_id = id;
    r.prompt = prompt;
    r.sampling.max_tokens = max_tokens;
    return r;
  }

  zmq::context_t ctx_{1};
  std::unique_ptr<FakeEngine> engine_;
  std::unique_ptr<ZmqEndpoint> endpoint_;
};

}  // namespace zinfer::gateway::testing
