// Graceful shutdown (SIGTERM in `zinfer serve`, Gateway::drain): new requests get 503 at once and
// /health turns 503; requests in flight that finish within the grace period end normally; the
// others end with an error (an SSE error event and [DONE], a 503, an ErrorReply 503), none in
// silence.
#include <future>

#include <gtest/gtest.h>

#include "fake_engine.h"
#include "gateway/gateway.h"
#include "http_client.h"
#include "zmq_fixture.h"

namespace zinfer::gateway::testing {
namespace {

namespace http = boost::beast::http;
using nlohmann::json;
using protocol::ErrorReply;
using protocol::MessageType;
using protocol::TextDelta;

// Reads a ZeroMQ request's frames until its end: "done" when its last delta came, else the
// ErrorReply's "code kind".
std::string zmq_outcome(ZmqClient& c, uint64_t id) {
  for (;;) {
    auto f = c.receive(std::chrono::seconds(10));
    if (!f) return "silence";
    if (f->type() == MessageType::kErrorReply) {
      auto e = f->as<ErrorReply>();
      EXPECT_EQ(e.request_id, id);
      return std::to_string(e.code) + " " + e.kind;
    }
    auto d = f->as<TextDelta>();
    EXPECT_EQ(d.request_id, id);
    if (!d.finish_reason.empty()) return "done";
  }
}

// Invariant 36 (docs/architecture.md): shutdown drains, and ends nothing in silence.
TEST(Drain, InFlightRequestsFinishWithinTheGraceAndTheRestEndWithAnError) {
  FakeEngine engine(std::chrono::milliseconds(20));  // a token every 20 ms
  GatewayOptions o;
  o.http.port = 0;
  o.http.served_model_name = "test-model";
  o.http.max_model_len = 4096;
  o.zmq.bind = "tcp://127.0.0.1:*";
  o.zmq.served_model_name = "test-model";
  o.zmq.max_model_len = 4096;
  o.shutdown_grace_s = 1;
  auto gateway = std::make_unique<Gateway>(engine, o);
  gateway->start();
  const uint16_t port = gateway->http()->port();

  // In flight: a short stream (20 tokens, 0.4 s), a stream and a waiting request that never end,
  // over HTTP; a short and an endless request over ZeroMQ.
  HttpConnection short_stream(port), endless_stream(port), endless_wait(port);
  short_stream.send(http::verb::post, "/v1/completions", R"({"prompt":"short","max_tokens":20,"stream":true})");
  endless_stream.send(http::verb::post, "/v1/completions", R"({"prompt":"HANG","stream":true})");
  endless_wait.send(http::verb::post, "/v1/completions", R"({"prompt":"HANG"})");
  zmq::context_t ctx(1);
  ZmqClient zmq_short(ctx, gateway->zmq()->endpoint()), zmq_endless(ctx, gateway->zmq()->endpoint());
  protocol::GenerateRequest r;
  r.request_id = 1;
  r.prompt = "short";
  r.sampling.max_tokens = 20;
  zmq_short.send(r);
  r.prompt = "HANG";
  zmq_endless.send(r);
  ASSERT_TRUE(engine.wait_submitted(5, std::chrono::seconds(10)));
  short_stream.read_until("data: ");
  endless_stream.read_until("data: ");

  auto drained = std::async(std::launch::async, [&] {
    return gateway->drain([](std::chrono::milliseconds t) { std::this_thread::sleep_for(t); });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));

  // While draining: no new work, and /health says so.
  auto refused = post_json(port, "/v1/completions", R"({"prompt":"late","max_tokens":1})");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.json()["error"]["type"], "service_unavailable_error");
  EXPECT_EQ(get(port, "/health").status, 503);
  ZmqClient zmq_late(ctx, gateway->zmq()->endpoint());
  r.request_id = 2;
  r.prompt = "late";
  zmq_late.send(r);
  EXPECT_EQ(zmq_outcome(zmq_late, 2), "503 unavailable");
  EXPECT_EQ(engine.submitted().size(), 5u);

  // The short ones finish normally within the grace period.
  const std::string short_body = short_stream.read_until("data: [DONE]");
  EXPECT_EQ(short_body.find("\"error\""), std::string::npos) << short_body;
  EXPECT_NE(short_body.find("\"finish_reason\":\"length\""), std::string::npos) << short_body;
  EXPECT_EQ(zmq_outcome(zmq_short, 1), "done");

  // The endless ones end with an error after it.
  const Gateway::DrainSummary summary = drained.get();
  const std::string endless_body = endless_stream.read_until("data: [DONE]");
  // The error event (OpenAI's error object, code 503), then [DONE].
  const size_t error_at = endless_body.find("data: {\"error\"");
  ASSERT_NE(error_at, std::string::npos) << endless_body;
  EXPECT_NE(endless_body.find("\"code\":503", error_at), std::string::npos) << endless_body;
  EXPECT_LT(error_at, endless_body.find("data: [DONE]"));
  auto waited = endless_wait.read_reply();
  EXPECT_EQ(waited.status, 503);
  EXPECT_EQ(waited.json()["error"]["code"], 503);
  EXPECT_EQ(zmq_outcome(zmq_endless, 1), "503 shutdown");

  EXPECT_EQ(summary.in_flight, 5);
  EXPECT_EQ(summary.ended, 2 + 1);
  EXPECT_GE(summary.took.count(), 1000);
  EXPECT_LT(summary.took.count(), 1000 + 4000);
  for (const auto& s : engine.submitted()) {
    if (s.prompt == "HANG") EXPECT_TRUE(engine.aborted().count(s.request_id)) << "an ended request kept running";
  }
  EXPECT_EQ(engine.active(), 0u);
}

// With nothing in flight, a drain does not wait for the grace period.
TEST(Drain, NothingInFlightStopsAtOnce) {
  FakeEngine engine;
  GatewayOptions o;
  o.http.port = 0;
  o.zmq.bind = "tcp://127.0.0.1:*";
  o.shutdown_grace_s = 30;
  Gateway gateway(engine, o);
  gateway.start();
  const auto summary = gateway.drain([](std::chrono::milliseconds t) { std::this_thread::sleep_for(t); });
  EXPECT_EQ(summary.in_flight, 0);
  EXPECT_EQ(summary.ended, 0);
  EXPECT_LT(summary.took.count(), 3000);
}

}  // namespace
}  // namespace zinfer::gateway::testing
