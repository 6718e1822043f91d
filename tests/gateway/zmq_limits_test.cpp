// The ZeroMQ endpoint's limits: frames over the size cap never reach the engine, and a client that
// does not read its replies has its requests cancelled (KV freed in the engine) and told so by an
// ErrorReply each, never dropped silently, while other clients are served.
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>

#include "zmq_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using protocol::ErrorReply;
using protocol::MessageType;
using protocol::TextDelta;

class ZmqLimitsTest : public ZmqEndpointTest {
 protected:
  void SetUp() override {}  // each test starts the endpoint with its own options

  void start(ZmqEndpointOptions o) {
    engine_ = std::make_unique<FakeEngine>();
    o.served_model_name = "test-model";
    o.max_model_len = 1 << 20;
    endpoint_ = std::make_unique<ZmqEndpoint>(*engine_, o);
    endpoint_->start();
  }

  // Reads one request's frames to its end: true when it finished normally.
  static bool completes(ZmqClient& c, uint64_t id) {
    for (;;) {
      auto f = c.receive();
      if (!f || f->type() != MessageType::kTextDelta) return false;
      auto d = f->as<TextDelta>();
      if (d.request_id != id) return false;
      if (!d.finish_reason.empty()) return true;
    }
  }
};

// Invariant 27 (docs/architecture.md): back-pressure, not loss; no client makes the gateway
// buffer more than HTTP's body cap per message.
TEST_F(ZmqLimitsTest, FramesOverTheCapNeverReachTheEngine) {
  ZmqEndpointOptions o;
  o.bind = "tcp://127.0.0.1:*";
  o.max_message_bytes = 4096;
  start(o);
  ZmqClient c(ctx_, endpoint_->endpoint());
  c.send(request(1, std::string(3000, 'a'), 1));  // under the cap: served
  EXPECT_TRUE(completes(c, 1));
  ZmqClient big(ctx_, endpoint_->endpoint());
  big.send(request(2, std::string(5000, 'b'), 1));  // over: the connection is closed unread
  EXPECT_FALSE(big.receive(std::chrono::milliseconds(300)));
  // Everyone else is served, and the engine saw only the first request.
  ZmqClient other(ctx_, endpoint_->endpoint());
  other.send(request(3, "small", 1));
  EXPECT_TRUE(completes(other, 3));
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].prompt.size(), 3000u);
  EXPECT_EQ(sent[1].prompt, "small");
}

// A client stops reading while its requests stream: when its queue is full, each of its requests
// is aborted in the engine and gets an ErrorReply 429 "slow_reader", which the client finds after
// what it had not read once it reads again; nothing ends in silence, and another client is served
// all along.
TEST_F(ZmqLimitsTest, ASlowReadersRequestsAreFailedNotDropped) {
  ZmqEndpointOptions o;
  o.bind = "ipc:///tmp/zinfer-test-slow-reader-" + std::to_string(::getpid());
  o.send_high_water_mark = 8;
  start(o);
  zmq::context_t client_ctx(1);
  ZmqClient slow(client_ctx, endpoint_->endpoint());
  slow.socket().set(zmq::sockopt::rcvhwm, 1);
  slow.socket().set(zmq::sockopt::rcvbuf, 1024);
  const std::set<uint64_t> ids = {11, 12, 13};
  for (uint64_t id : ids) slow.send(request(id, "HANG", 1));
  ASSERT_TRUE(engine_->wait_submitted(3, std::chrono::seconds(10)));
  const auto submitted = engine_->submitted();
  // The fake engine streams one token per millisecond per request until aborted: the socket
  // buffers fill, then the gateway's queue.
  for (const auto& r : submitted) {
    EXPECT_TRUE(engine_->wait_aborted(r.request_id, std::chrono::seconds(60))) << r.request_id;
  }
  EXPECT_EQ(engine_->active(), 0u);  // nothing keeps generating (or holding KV) for the slow client

  ZmqClient other(ctx_, endpoint_->endpoint());
  other.send(request(21, "fine", 3));
  EXPECT_TRUE(completes(other, 21));

  // A new request while the replies wait unread is refused, behind them; had they all gone out
  // already (the socket buffers drained them), it is served: either way it does not end in silence.
  slow.send(request(14, "x", 1));
  std::set<uint64_t> failed;
  bool new_request_ended = false;
  while (failed != ids || !new_request_ended) {
    auto f = slow.receive(std::chrono::seconds(10));
    ASSERT_TRUE(f) << "a request of the slow client ended in silence";
    if (f->type() == MessageType::kTextDelta) {
      auto d = f->as<TextDelta>();
      if (d.request_id == 14) {
        new_request_ended = new_request_ended || !d.finish_reason.empty();
        continue;
      }
      EXPECT_TRUE(ids.count(d.request_id)) << d.request_id;
      EXPECT_FALSE(failed.count(d.request_id)) << "a delta after the request's ErrorReply";
      continue;
    }
    ASSERT_EQ(f->type(), MessageType::kErrorReply);
    auto e = f->as<ErrorReply>();
    EXPECT_EQ(e.code, 429);
    EXPECT_EQ(e.kind, "slow_reader");
    if (e.request_id == 14) {
      new_request_ended = true;
      continue;
    }
    EXPECT_TRUE(ids.count(e.request_id)) << e.request_id;
    failed.insert(e.request_id);
  }
  EXPECT_EQ(failed, ids);
  // Once it has read everything, it is served again.
  slow.send(request(15, "again", 2));
  EXPECT_TRUE(completes(slow, 15));
}

}  // namespace
}  // namespace zinfer::gateway::testing
