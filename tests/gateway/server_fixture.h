// An HttpServer on 127.0.0.1 with an ephemeral port, in front of a FakeEngine.
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include "fake_engine.h"
#include "gateway/http_server.h"
#include "http_client.h"

namespace zinfer::gateway::testing {

inline HttpOptions test_options() {
  HttpOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.served_model_name = "test-model";
  o.io_threads = 2;
  o.max_body_bytes = 64 * 1024;
  o.max_in_flight = 64;
  o.max_model_len = 4096;
  return o;
}

class GatewayServerTest : public ::testing::Test {
 protected:
  void SetUp() override { start(test_options()); }
  void TearDown() override {
    server_.reset();
    engine_.reset();
  }

  void start(HttpOptions options) {
    server_.reset();
    engine_ = std::make_unique<FakeEngine>();
    server_ = std::make_unique<HttpServer>(*engine_, options);
    server_->start();
    port_ = server_->port();
  }

  std::unique_ptr<FakeEngine> engine_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

}  // namespace zinfer::gateway::testing
