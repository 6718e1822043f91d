// `serve` end to end against fake servers: the OpenAI completions and chat endpoints over HTTP
// (fake_openai_server.h) and a fake zinfer ZeroMQ ROUTER. Each request k = 1..13 asks for k tokens
// with a prompt of k + 2 letters; k = 13 fails on the server. So: 12 successes, 1 failure, input
// tokens 3 + ... + 14 = 102, output tokens 1 + ... + 12 = 78, and (two tokens per chunk) ITL
// entries sum(ceil(k/2) - 1) = 42 - 12 = 30.
#include <atomic>
#include <limits>
#include <thread>

#include <gtest/gtest.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "protocol/envelope.h"
#include "tests/bench/fake_codec.h"
#include "tests/bench/fake_openai_server.h"
#include "tools/bench/lib/load_runner.h"
#include "tools/bench/lib/openai_client.h"
#include "tools/bench/lib/report.h"
#include "tools/bench/lib/zmq_client.h"

namespace zinfer::bench {
namespace {

std::vector<BenchRequest> thirteen_requests() {
  std::vector<BenchRequest> rs;
  for (int k = 1; k <= 13; ++k) rs.push_back({std::string(static_cast<size_t>(k + 2), 'p'), k + 2, k});
  return rs;
}

void expect_thirteen_summary(std::vector<RequestRecord> records, double duration, const std::string& label) {
  SCOPED_TRACE(label);
  testing::LetterCodec codec;
  count_output_tokens(records, codec);
  const Summary s = summarize(records, duration, {});
  EXPECT_EQ(s.completed, 12);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.total_input, 102);
  EXPECT_EQ(s.total_output, 78);
  EXPECT_EQ(s.token_count_mismatches, 0);
  EXPECT_EQ(s.usage_missing, 0);
  EXPECT_EQ(s.itl.count, 30u);
  EXPECT_EQ(s.tpot.count, 11u);  // the one-token request has no TPOT
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_FALSE(records[12].success);
  for (int k = 1; k <= 12; ++k) {
    const auto& r = records[static_cast<size_t>(k - 1)];
    EXPECT_TRUE(r.success) << r.error;
    EXPECT_EQ(r.output_tokens(), k);
    EXPECT_EQ(r.usage_prompt_tokens.value_or(-1), k + 2);
    EXPECT_EQ(r.chunk_times_s.size(), static_cast<size_t>((k + 1) / 2));
    EXPECT_GE(r.ttft_s(), 0.0);
    EXPECT_GE(r.latency_s(), r.ttft_s());
  }
  // Chunks are timed as they arrive: request 12's six chunks come 3 ms apart.
  const auto& slow = records[11].chunk_times_s;
  EXPECT_LT(slow.front(), slow.back());
  RunInfo info;
  info.backend = label;
  info.request_rate = std::numeric_limits<double>::infinity();
  const std::string table = format_summary(s, info);
  EXPECT_NE(table.find("Successful requests:                     12 "), std::string::npos) << table;
  EXPECT_NE(table.find("Failed requests:                         1 "), std::string::npos) << table;
  EXPECT_NE(table.find("Total input tokens:                      102 "), std::string::npos) << table;
  EXPECT_NE(table.find("Total generated tokens:                  78 "), std::string::npos) << table;
}

TEST(Serve, OpenAICompletionsAllAtOnceWithConcurrencyLimit) {
  testing::FakeOpenAIServer server;
  OpenAIBackend backend(server.base_url(), "/v1/completions", ApiKind::kCompletions, 2);
  LoadOptions opt;
  opt.model = "fake";
  opt.request_rate = std::numeric_limits<double>::infinity();
  opt.max_concurrency = 4;
  opt.progress = false;
  const LoadResult result = run_load(backend, thirteen_requests(), opt);
  EXPECT_EQ(server.requests_served(), 13);
  EXPECT_LE(server.max_in_flight(), 4);
  EXPECT_GE(server.max_in_flight(), 1);
  expect_thirteen_summary(result.records, result.duration_s, "openai");
  EXPECT_EQ(result.records[12].error.rfind("HTTP 400", 0), 0u) << result.records[12].error;
}

TEST(Serve, OpenAIChatPoisson) {
  testing::FakeOpenAIServer server;
  OpenAIBackend backend(server.base_url(), "/v1/chat/completions", ApiKind::kChat, 2);
  LoadOptions opt;
  opt.model = "fake";
  opt.request_rate = 500;
  opt.seed = 5;
  opt.progress = false;
  const LoadResult result = run_load(backend, thirteen_requests(), opt);
  EXPECT_EQ(server.requests_served(), 13);
  expect_thirteen_summary(result.records, result.duration_s, "openai-chat");
  EXPECT_EQ(result.records[0].generated_text, "a");
  EXPECT_EQ(result.records[4].generated_text, "abcde");
}

TEST(Serve, ExtraBodyAndHeadersReachTheServer) {
  testing::FakeOpenAIServer server;
  RequestBodyOptions body;
  body.top_k = 3;
  body.extra_body = {{"response_format", {{"type", "json_object"}}}};
  OpenAIBackend backend(server.base_url(), "/v1/completions", ApiKind::kCompletions, 1, "", body,
                        {{"X-Bench-Label", "run-7"}});
  LoadOptions opt;
  opt.model = "fake";
  opt.request_rate = std::numeric_limits<double>::infinity();
  opt.progress = false;
  const LoadResult result = run_load(backend, {BenchRequest{"ppp", 3, 2}}, opt);
  ASSERT_TRUE(result.records[0].success) << result.records[0].error;
  const auto sent = nlohmann::json::parse(server.last_body());
  EXPECT_EQ(sent["response_format"]["type"], "json_object");
  EXPECT_EQ(sent["top_k"], 3);
  EXPECT_EQ(sent["max_tokens"], 2);
  EXPECT_NE(server.last_head().find("X-Bench-Label: run-7"), std::string::npos) << server.last_head();
}

TEST(Serve, ConnectionRefusedCountsAsFailure) {
  int port = 0;
  {
    testing::FakeOpenAIServer probe;  // a port that was free a moment ago and is closed now
    port = probe.port();
  }
  OpenAIBackend backend("http://127.0.0.1:" + std::to_string(port), "/v1/completions", ApiKind::kCompletions, 1);
  LoadOptions opt;
  opt.request_rate = std::numeric_limits<double>::infinity();
  opt.progress = false;
  const LoadResult result = run_load(backend, {{"pp", 2, 3}, {"ppp", 3, 4}}, opt);
  const Summary s = summarize(result.records, result.duration_s, {});
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.failed, 2);
  EXPECT_FALSE(result.records[0].error.empty());
}

// A zinfer gateway stand-in: a ROUTER that answers GenerateRequest with TextDelta frames, two
// tokens each, finish_reason "length" on the last, and ErrorReply for max_tokens = 13;
// max_tokens = 12 streams with 3 ms between deltas.
class FakeZmqServer {
 public:
  FakeZmqServer() : router_(ctx_, zmq::socket_type::router) {
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { loop(); });
  }
  ~FakeZmqServer() {
    stop_ = true;
    thread_.join();
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  void reply(const zmq::message_t& identity, const std::string& frame) {
    zmq::multipart_t out;
    out.addmem(identity.data(), identity.size());
    out.addstr(frame);
    out.send(router_);
  }
  void loop() {
    while (!stop_) {
      zmq::multipart_t msg;
      zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(20)) == 0) continue;
      if (!msg.recv(router_)) continue;
      const auto req = protocol::decode<protocol::GenerateRequest>(msg[msg.size() - 1].to_string_view());
      const int n = req.sampling.max_tokens;
      if (n == 13) {
        protocol::ErrorReply err;
        err.request_id = req.request_id;
        err.code = 400;
        err.kind = "invalid_request";
        err.message = "unlucky request";
        reply(msg[0], protocol::encode(err));
        continue;
      }
      for (int i = 0; i < n; i += 2) {
        protocol::TextDelta d;
        d.request_id = req.request_id;
        d.text.push_back(static_cast<char>('a' + i % 26));
        d.token_ids.push_back(i);
        if (i + 1 < n) {
          d.text.push_back(static_cast<char>('a' + (i + 1) % 26));
          d.token_ids.push_back(i + 1);
        }
        d.prompt_tokens = static_cast<int32_t>(req.prompt.size());
        d.completion_tokens = std::min(i + 2, n);
        if (i + 2 >= n) d.finish_reason = "length";
        reply(msg[0], protocol::encode(d));
        if (n == 12) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the slow request
      }
    }
  }
  zmq::context_t ctx_{1};
  zmq::socket_t router_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(Serve, ZinferZmq) {
  FakeZmqServer server;
  ZmqBackend backend(server.endpoint());
  LoadOptions opt;
  opt.model = "fake";
  opt.request_rate = std::numeric_limits<double>::infinity();
  opt.max_concurrency = 3;
  opt.progress = false;
  const LoadResult result = run_load(backend, thirteen_requests(), opt);
  expect_thirteen_summary(result.records, result.duration_s, "zinfer-zmq");
  EXPECT_NE(result.records[12].error.find("unlucky request"), std::string::npos) << result.records[12].error;
}

}  // namespace
}  // namespace zinfer::bench
