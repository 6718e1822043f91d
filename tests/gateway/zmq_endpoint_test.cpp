// The ZeroMQ client endpoint: streaming, id mapping, abort, disconnect, and bad frames that get an
// ErrorReply while the endpoint keeps serving.
#include <gtest/gtest.h>

#include "zmq_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using protocol::ErrorReply;
using protocol::MessageType;
using protocol::TextDelta;

// Collects the deltas of one request until its last; fails on anything else.
std::vector<TextDelta> collect(ZmqClient& c, uint64_t id) {
  std::vector<TextDelta> out;
  for (;;) {
    auto f = c.receive();
    if (!f) {
      ADD_FAILURE() << "timed out waiting for request " << id;
      return out;
    }
    if (f->type() != MessageType::kTextDelta) {
      ADD_FAILURE() << "unexpected " << protocol::to_string(f->type());
      return out;
    }
    auto d = f->as<TextDelta>();
    EXPECT_EQ(d.request_id, id);
    out.push_back(d);
    if (!d.finish_reason.empty()) return out;
  }
}

ErrorReply expect_error_reply(ZmqClient& c) {
  auto f = c.receive();
  if (!f) {
    ADD_FAILURE() << "no ErrorReply";
    return {};
  }
  EXPECT_EQ(f->type(), MessageType::kErrorReply);
  return f->type() == MessageType::kErrorReply ? f->as<ErrorReply>() : ErrorReply{};
}

TEST_F(ZmqEndpointTest, StreamsDeltasUnderTheClientsId) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  c.send(request(42, "hello", 3));
  auto deltas = collect(c, 42);
  ASSERT_EQ(deltas.size(), 3u);
  std::string text;
  for (const auto& d : deltas) text += d.text;
  EXPECT_EQ(text, FakeEngine::token_text(0, 0) + FakeEngine::token_text(0, 1) + FakeEngine::token_text(0, 2));
  EXPECT_EQ(deltas.back().finish_reason, "length");
  EXPECT_EQ(deltas.back().token_ids, std::vector<int32_t>{FakeEngine::token_id(0, 2)});
  EXPECT_EQ(deltas.back().prompt_tokens, 5);
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_NE(sent[0].request_id, 42u);  // the engine sees the gateway's own id
  EXPECT_EQ(sent[0].model, "test-model");
}

// The scheduling fields travel to the engine as the client set them; a negative prediction is
// refused with the field's name.
TEST_F(ZmqEndpointTest, TenantAndPredictionReachTheEngine) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  auto r = request(5, "hello", 2);
  r.tenant = "team-b";
  r.predicted_output_tokens = 2;
  c.send(r);
  EXPECT_EQ(collect(c, 5).size(), 2u);
  auto bad = request(6, "hello", 2);
  bad.predicted_output_tokens = -4;
  c.send(bad);
  auto e = expect_error_reply(c);
  EXPECT_EQ(e.request_id, 6u);
  EXPECT_EQ(e.code, 400);
  EXPECT_NE(e.message.find("predicted_output_tokens"), std::string::npos) << e.message;
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].tenant, "team-b");
  EXPECT_EQ(sent[0].predicted_output_tokens, 2);
}

TEST_F(ZmqEndpointTest, SameClientIdFromTwoClientsIsTwoRequests) {
  ZmqClient a(ctx_, endpoint_->endpoint()), b(ctx_, endpoint_->endpoint());
  a.send(request(1, "a", 4));
  b.send(request(1, "bb", 2));
  EXPECT_EQ(collect(a, 1).size(), 4u);
  EXPECT_EQ(collect(b, 1).size(), 2u);
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[0].request_id, sent[1].request_id);
}

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST_F(ZmqEndpointTest, BrokenMsgpackGetsErrorReplyAndTheEndpointKeepsServing) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  c.send_raw(std::string("\xc1\xff\x00garbage", 10));
  auto err = expect_error_reply(c);
  EXPECT_EQ(err.request_id, 0u);
  EXPECT_EQ(err.code, 400);
  EXPECT_EQ(err.kind.rfind("bad_frame", 0), 0u) << err.kind;
  // Valid msgpack, not an envelope; an unknown type; a truncated frame.
  c.send_raw(std::string("\x93\x01\x02\x03", 4));
  EXPECT_EQ(expect_error_reply(c).code, 400);
  std::string good = protocol::encode(request(5, "x", 1));
  c.send_raw(good.substr(0, good.size() / 2));
  EXPECT_EQ(expect_error_reply(c).request_id, 0u);
  protocol::StepPlan plan;
  c.send(plan);
  EXPECT_EQ(expect_error_reply(c).kind, "unexpected_type");
  // Still serving this client and others.
  c.send(request(7, "after", 2));
  EXPECT_EQ(collect(c, 7).size(), 2u);
  ZmqClient other(ctx_, endpoint_->endpoint());
  other.send(request(8, "other", 1));
  EXPECT_EQ(collect(other, 8).size(), 1u);
}

TEST_F(ZmqEndpointTest, InvalidRequestsGetErrorRepliesWithTheirId) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  auto zero = request(3, "x", 0);
  c.send(zero);
  auto e1 = expect_error_reply(c);
  EXPECT_EQ(e1.request_id, 3u);
  EXPECT_EQ(e1.code, 400);
  EXPECT_NE(e1.message.find("max_tokens"), std::string::npos);

  auto model = request(4, "x", 1);
  model.model = "nope";
  c.send(model);
  EXPECT_EQ(expect_error_reply(c).code, 404);

  c.send(request(0, "x", 1));
  EXPECT_EQ(expect_error_reply(c).code, 400);

  protocol::GenerateRequest empty;
  empty.request_id = 9;
  c.send(empty);
  EXPECT_EQ(expect_error_reply(c).request_id, 9u);

  // The engine's own error (prompt over the context) comes back under the client's id.
  c.send(request(10, "TOO_LONG", 1));
  auto e2 = expect_error_reply(c);
  EXPECT_EQ(e2.request_id, 10u);
  EXPECT_EQ(e2.code, 400);
  EXPECT_EQ(engine_->submitted().size(), 1u);  // only the last one reached the engine
}

// A structured output that does not compile is refused before the engine sees the request, naming
// the field and the construct; one that compiles reaches the engine as sent.
TEST_F(ZmqEndpointTest, StructuredOutputThatDoesNotCompileIsAnErrorReply) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  auto bad = request(5, "x", 2);
  bad.sampling.structured = protocol::StructuredOutput{};
  bad.sampling.structured->kind = protocol::StructuredKind::kRegex;
  bad.sampling.structured->text = "a\\bc";
  c.send(bad);
  auto e = expect_error_reply(c);
  EXPECT_EQ(e.request_id, 5u);
  EXPECT_EQ(e.code, 400);
  EXPECT_NE(e.message.find("sampling.structured"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("word boundary"), std::string::npos) << e.message;

  auto good = request(6, "x", 2);
  good.sampling.structured = protocol::StructuredOutput{};
  good.sampling.structured->kind = protocol::StructuredKind::kChoice;
  good.sampling.structured->choices = {"yes", "no"};
  c.send(good);
  ASSERT_TRUE(engine_->wait_submitted(1, std::chrono::seconds(5)));
  const auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].sampling.structured);
  EXPECT_EQ(sent[0].sampling.structured->choices, (std::vector<std::string>{"yes", "no"}));
}

TEST_F(ZmqEndpointTest, DuplicateIdInFlightIsRefused) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  c.send(request(5, "HANG", 1));
  ASSERT_TRUE(engine_->wait_submitted(1, std::chrono::seconds(10)));
  c.send(request(5, "again", 1));
  // Deltas of the hanging request keep coming; find the error among them.
  for (;;) {
    auto f = c.receive();
    ASSERT_TRUE(f);
    if (f->type() == MessageType::kErrorReply) {
      auto e = f->as<ErrorReply>();
      EXPECT_EQ(e.request_id, 5u);
      EXPECT_NE(e.message.find("already in flight"), std::string::npos);
      break;
    }
  }
  EXPECT_EQ(engine_->submitted().size(), 1u);
}

TEST_F(ZmqEndpointTest, AbortReachesTheEngineAndEndsTheStream) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  c.send(request(11, "HANG", 1));
  auto first = c.receive();
  ASSERT_TRUE(first);
  uint64_t internal = engine_->submitted()[0].request_id;
  protocol::Abort abort;
  abort.request_id = 11;
  c.send(abort);
  ASSERT_TRUE(engine_->wait_aborted(internal, std::chrono::seconds(10)));
  // Deltas already on their way may arrive first; the stream ends with finish_reason "abort".
  for (;;) {
    auto f = c.receive();
    ASSERT_TRUE(f);
    auto d = f->as<TextDelta>();
    if (!d.finish_reason.empty()) {
      EXPECT_EQ(d.finish_reason, "abort");
      break;
    }
  }
}

// Invariant 2 (docs/architecture.md): requests are the gateway's until handed on; a client that goes away becomes an Abort.
TEST_F(ZmqEndpointTest, DisconnectedClientsRequestsAreAborted) {
  auto c = std::make_unique<ZmqClient>(ctx_, endpoint_->endpoint());
  c->send(request(12, "HANG", 1));
  ASSERT_TRUE(c->receive());
  uint64_t internal = engine_->submitted()[0].request_id;
  c.reset();  // the DEALER goes away; the next delta cannot be routed
  EXPECT_TRUE(engine_->wait_aborted(internal, std::chrono::seconds(10)));
}

TEST_F(ZmqEndpointTest, PingAndStats) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  c.send(protocol::Ping{77, 5});
  auto f = c.receive();
  ASSERT_TRUE(f);
  ASSERT_EQ(f->type(), MessageType::kPong);
  EXPECT_EQ(f->as<protocol::Pong>().seq, 77u);
  protocol::Stats s;
  s.running = 4;
  engine_->set_stats(s);
  c.send(protocol::StatsRequest{1});
  auto g = c.receive();
  ASSERT_TRUE(g);
  EXPECT_EQ(g->as<protocol::Stats>().running, 4);
}

TEST_F(ZmqEndpointTest, NSamplesEachEnd) {
  ZmqClient c(ctx_, endpoint_->endpoint());
  auto r = request(13, "x", 2);
  r.sampling.n = 3;
  c.send(r);
  std::map<int, std::string> text;
  int finished = 0;
  while (finished < 3) {
    auto f = c.receive();
    ASSERT_TRUE(f);
    auto d = f->as<TextDelta>();
    text[d.index] += d.text;
    if (!d.finish_reason.empty()) ++finished;
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(text[i], FakeEngine::token_text(i, 0) + FakeEngine::token_text(i, 1));
}

}  // namespace
}  // namespace zinfer::gateway::testing

// The two entry points together: ids unique across both, one /metrics for both.
#include "gateway/gateway.h"
#include "http_client.h"

namespace zinfer::gateway::testing {
namespace {

TEST(GatewayTest, HttpAndZmqShareIdsAndMetrics) {
  FakeEngine engine;
  GatewayOptions o;
  o.http.port = 0;
  o.http.served_model_name = "m";
  o.zmq.bind = "tcp://127.0.0.1:*";
  o.zmq.served_model_name = "m";
  Gateway gw(engine, o);
  gw.start();
  auto r = post_json(gw.http()->port(), "/v1/completions", R"({"prompt":"ab","max_tokens":2})");
  ASSERT_EQ(r.status, 200) << r.body;
  zmq::context_t ctx(1);
  ZmqClient c(ctx, gw.zmq()->endpoint());
  protocol::GenerateRequest req;
  req.request_id = 1;
  req.prompt = "abc";
  req.sampling.max_tokens = 3;
  c.send(req);
  for (;;) {
    auto f = c.receive();
    ASSERT_TRUE(f);
    if (!f->as<protocol::TextDelta>().finish_reason.empty()) break;
  }
  auto sent = engine.submitted();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[0].request_id, sent[1].request_id);
  auto m = get(gw.http()->port(), "/metrics").body;
  EXPECT_NE(m.find("zinfer_generation_tokens_total 5\n"), std::string::npos) << m;
  EXPECT_NE(m.find("zinfer_prompt_tokens_total 5\n"), std::string::npos) << m;
  gw.stop();
}

}  // namespace
}  // namespace zinfer::gateway::testing
