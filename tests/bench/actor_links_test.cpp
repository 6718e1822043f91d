// The executor and detokenizer actors on their inbound links, over shm:// rings and over ipc://
// sockets alike (runtime/link.h): a frame that does not decode gets the same answer on both
// (the executor's ErrorReply, the detokenizer's log line) and the actor goes on serving. The
// executor runs the synthetic backend, as in the control-plane benchmark.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <zmq.hpp>

#include "actors/detokenizer/detokenizer_actor.h"
#include "actors/executor/executor_actor.h"
#include "protocol/envelope.h"
#include "runtime/actor.h"
#include "runtime/context.h"
#include "runtime/link.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"

namespace zinfer {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kModel = std::string(ZINFER_SOURCE_DIR) + "/tests/data/models/qwen3";

class TempFolder {
 public:
  TempFolder() {
    // Short: ipc:// paths are limited to about 100 bytes.
    std::string pattern = "/tmp/zinfer-links-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
    path_ = pattern;
  }
  ~TempFolder() { fs::remove_all(path_); }
  std::string endpoint(const std::string& scheme, const std::string& name) const {
    return scheme + "://" + (path_ / (name + "." + scheme)).string();
  }

 private:
  fs::path path_;
};

// The next message on a link, within 10 s.
std::optional<std::string> recv_within(runtime::Link& link) {
  std::optional<std::string> got;
  runtime::Loop loop;
  link.watch(loop, [&](runtime::Link& l) {
    if (!got) got = l.recv();
  });
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!got && std::chrono::steady_clock::now() < deadline) loop.run_once(100ms);
  link.unwatch(loop);
  return got;
}

class ActorLinks : public ::testing::TestWithParam<std::string> {};

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST_P(ActorLinks, ExecutorAnswersABadFrameAndKeepsServing) {
  TempFolder dir;
  gpu::BackendOptions o;
  o.model_dir = kModel;
  o.device = "synthetic";
  o.num_gpu_blocks = 64;
  o.num_cpu_blocks = 8;
  runtime::EndpointsConfig endpoints;
  endpoints.executor = dir.endpoint(GetParam(), "executor");
  runtime::Actor executor("executor", actors::executor_actor(o, endpoints));
  auto link = runtime::open_link(runtime::Link::Role::kClient, endpoints.executor);

  link->send("this is not msgpack");
  auto reply = recv_within(*link);
  ASSERT_TRUE(reply) << "no answer to a bad frame";
  protocol::Frame f = protocol::open(*reply);
  ASSERT_EQ(f.type(), protocol::MessageType::kErrorReply);
  EXPECT_FALSE(f.as<protocol::ErrorReply>().kind.empty());

  runtime::send_message(*link, protocol::ExecutorInfoRequest{1});
  reply = recv_within(*link);
  ASSERT_TRUE(reply) << "no answer after the bad frame";
  auto info = protocol::decode<protocol::ExecutorInfo>(*reply);
  EXPECT_EQ(info.num_gpu_blocks, 64);
  EXPECT_TRUE(info.error.empty()) << info.error;
  EXPECT_TRUE(executor.alive());
}

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST_P(ActorLinks, DetokenizerSkipsABadFrameAndKeepsServing) {
  TempFolder dir;
  runtime::EndpointsConfig endpoints;
  endpoints.detokenizer = dir.endpoint(GetParam(), "detokenizer");
  endpoints.gateway = dir.endpoint("ipc", "gateway");
  endpoints.scheduler = dir.endpoint("ipc", "scheduler");
  auto gateway = runtime::open_link(runtime::Link::Role::kPull, endpoints.gateway);
  auto scheduler = runtime::open_link(runtime::Link::Role::kPull, endpoints.scheduler);
  runtime::Actor detokenizer("detokenizer", actors::detokenizer_actor(kModel, endpoints));
  auto link = runtime::open_link(runtime::Link::Role::kPush, endpoints.detokenizer);

  link->send("\xc1 not a message");
  protocol::RequestStart start;
  start.request_id = 7;
  runtime::send_message(*link, start);
  protocol::TokenDelta delta;
  delta.request_id = 7;
  delta.token_ids = {5, 6};
  delta.finish_reason = "length";
  runtime::send_message(*link, delta);

  auto out = recv_within(*gateway);
  ASSERT_TRUE(out) << "nothing reached the gateway after the bad frame";
  auto text = protocol::decode<protocol::TextDelta>(*out);
  EXPECT_EQ(text.request_id, 7u);
  EXPECT_EQ(text.token_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(text.finish_reason, "length");
  EXPECT_TRUE(detokenizer.alive());
}

INSTANTIATE_TEST_SUITE_P(Transports, ActorLinks, ::testing::Values("shm", "ipc"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace zinfer
