// The gateway's side of supervision (ZmqEngineClient::on_peer_notice): when the launcher says an
// actor is down, every request in flight ends with an ErrorReply 503 its client sees and an Abort
// that frees what the engine still holds, and /health is 503 until the actor is back.
#include <algorithm>
#include <chrono>
#include <vector>

#include <gtest/gtest.h>

#include "actors/pipeline/zmq_engine_client.h"
#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/messaging.h"

namespace zinfer::actors {
namespace {

using namespace std::chrono_literals;

// Invariant 38 (docs/architecture.md): what a dead actor held ends with an error, never in silence.
TEST(EngineClientPeers, ADownActorEndsEveryRequestInFlightWithAnErrorUntilItIsBack) {
  runtime::EndpointsConfig e;
  e.gateway = "inproc://peers-test-gateway";
  e.tokenizer = "inproc://peers-test-tokenizer";
  e.scheduler = "inproc://peers-test-scheduler";
  zmq::socket_t tokenizer(runtime::zmq_context(), zmq::socket_type::pull);
  tokenizer.bind(e.tokenizer);
  zmq::socket_t scheduler(runtime::zmq_context(), zmq::socket_type::pull);
  scheduler.bind(e.scheduler);
  scheduler.set(zmq::sockopt::rcvtimeo, 2000);
  ZmqEngineClient engine(e);
  zmq::socket_t pipeline(runtime::zmq_context(), zmq::socket_type::push);
  pipeline.connect(e.gateway);
  auto deliver = [&](const auto& msg) {
    runtime::send_message(pipeline, msg);
    zmq::pollitem_t item{engine.events_socket().handle(), 0, ZMQ_POLLIN, 0};
    ASSERT_EQ(zmq::poll(&item, 1, 2000ms), 1);
    engine.dispatch();
  };
  deliver(protocol::Stats{});
  EXPECT_TRUE(engine.healthy());

  std::vector<std::vector<gateway::EngineEvent>> events(2);
  for (uint64_t id : {1u, 2u}) {
    protocol::GenerateRequest r;
    r.request_id = id;
    engine.submit(r, [&events, id](gateway::EngineEvent ev) { events[id - 1].push_back(std::move(ev)); });
  }
  EXPECT_EQ(engine.on_peer_notice(runtime::PeerNotice{runtime::PeerNotice::Kind::kDown, "executor"}), 2u);
  for (const auto& got : events) {
    ASSERT_EQ(got.size(), 1u);
    const auto* err = std::get_if<protocol::ErrorReply>(&got[0]);
    ASSERT_NE(err, nullptr);
    EXPECT_EQ(err->code, 503);
    EXPECT_EQ(err->kind, "actor_restarted");
    EXPECT_NE(err->message.find("executor"), std::string::npos) << err->message;
  }
  EXPECT_EQ(std::get<protocol::ErrorReply>(events[0][0]).request_id, 1u);
  // The engine is told to forget both.
  std::vector<uint64_t> aborted;
  for (int i = 0; i < 2; ++i) {
    auto frame = runtime::recv_frame(scheduler, false);
    ASSERT_TRUE(frame.has_value());
    auto a = protocol::decode<protocol::Abort>(*frame);
    aborted.push_back(a.request_id);
  }
  std::sort(aborted.begin(), aborted.end());
  EXPECT_EQ(aborted, (std::vector<uint64_t>{1, 2}));
  EXPECT_FALSE(engine.healthy());  // /health 503 while the executor is down

  // What the dying pipeline still sends for them is dropped: nothing follows their error.
  protocol::TextDelta late;
  late.request_id = 1;
  late.finish_reason = "length";
  deliver(late);
  EXPECT_EQ(events[0].size(), 1u);

  engine.on_peer_notice(runtime::PeerNotice{runtime::PeerNotice::Kind::kDown, "detokenizer"});
  engine.on_peer_notice(runtime::PeerNotice{runtime::PeerNotice::Kind::kUp, "executor"});
  EXPECT_FALSE(engine.healthy());  // the detokenizer is still down
  engine.on_peer_notice(runtime::PeerNotice{runtime::PeerNotice::Kind::kUp, "detokenizer"});
  EXPECT_TRUE(engine.healthy());
}

}  // namespace
}  // namespace zinfer::actors
