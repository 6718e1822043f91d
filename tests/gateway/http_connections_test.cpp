// Connection handling: a client that goes away aborts its request; a thousand idle keep-alive
// connections need no extra threads; /metrics reports what happened.
#include <dirent.h>
#include <sys/resource.h>

#include <gtest/gtest.h>

#include "server_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

int thread_count() {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

// Invariant 2 (docs/architecture.md): requests are the gateway's until handed on; a client that goes away becomes an Abort.
TEST_F(GatewayServerTest, DisconnectWhileStreamingAborts) {
  HttpConnection c(port_);
  c.send(http::verb::post, "/v1/completions", R"({"prompt":"HANG","stream":true})");
  std::string seen = c.read_until("data: ");
  EXPECT_NE(seen.find("text/event-stream"), std::string::npos);
  ASSERT_EQ(engine_->submitted().size(), 1u);
  uint64_t id = engine_->submitted()[0].request_id;
  EXPECT_TRUE(engine_->aborted().empty());
  c.close();
  EXPECT_TRUE(engine_->wait_aborted(id, std::chrono::seconds(10)));
}

// Invariant 2 (docs/architecture.md): requests are the gateway's until handed on; a client that goes away becomes an Abort.
TEST_F(GatewayServerTest, DisconnectWhileWaitingAborts) {
  // A non-stream request sends nothing until the end; the client leaves before that.
  HttpConnection c(port_);
  c.send(http::verb::post, "/v1/chat/completions", R"({"messages":[{"role":"user","content":"HANG"}]})");
  ASSERT_TRUE(engine_->wait_submitted(1, std::chrono::seconds(10)));
  uint64_t id = engine_->submitted()[0].request_id;
  c.close();
  EXPECT_TRUE(engine_->wait_aborted(id, std::chrono::seconds(10)));
}

TEST_F(GatewayServerTest, ThousandIdleKeepAliveConnectionsNeedNoExtraThreads) {
  // Both ends of 1000 connections live in this process: 2000 descriptors and some.
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 2200) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 4096);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  ASSERT_GE(files.rlim_cur, 2200u) << "the descriptor limit (ulimit -n) is too low for this test";
  const int threads_before = thread_count();
  boost::asio::io_context client_io;
  std::vector<std::unique_ptr<HttpConnection>> conns;
  conns.reserve(1000);
  for (int i = 0; i < 1000; ++i) {
    conns.push_back(std::make_unique<HttpConnection>(client_io, port_));
    auto r = conns.back()->request(http::verb::get, "/health");
    ASSERT_EQ(r.status, 200) << "connection " << i;
    ASSERT_TRUE(r.keep_alive);
  }
  // All 1000 are open and idle at once, served by the same fixed I/O threads.
  EXPECT_EQ(thread_count(), threads_before);
  EXPECT_EQ(server_->io_threads(), 2);
  // And every one of them is still alive: a second request on each.
  for (int i = 0; i < 1000; i += 1) {
    auto r = conns[i]->request(http::verb::get, "/v1/models");
    ASSERT_EQ(r.status, 200) << "connection " << i;
  }
  // A few streams through held connections while the others idle.
  for (int i = 0; i < 1000; i += 250) {
    auto r = conns[i]->request(http::verb::post, "/v1/completions", R"({"prompt":"x","max_tokens":2,"stream":true})");
    EXPECT_EQ(sse_payloads(r.body).back(), "[DONE]");
  }
  EXPECT_EQ(thread_count(), threads_before);
}

TEST_F(GatewayServerTest, ExpectContinueGetsTheGoAhead) {
  HttpConnection c(port_);
  std::string body = R"({"prompt":"e","max_tokens":2})";
  std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Expect: 100-continue\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  boost::asio::write(c.socket(), boost::asio::buffer(head));
  std::string interim = c.read_until("\r\n\r\n");
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  boost::asio::write(c.socket(), boost::asio::buffer(body));
  auto r = c.read_reply();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["choices"][0]["text"], FakeEngine::token_text(0, 0) + FakeEngine::token_text(0, 1));
}

TEST_F(GatewayServerTest, ConnectionCloseIsHonoured) {
  HttpConnection c(port_);
  std::string req = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  boost::asio::write(c.socket(), boost::asio::buffer(req));
  auto r = c.read_reply();
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.keep_alive);
  char byte;
  boost::system::error_code ec;
  c.socket().read_some(boost::asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, boost::asio::error::eof);
}

TEST_F(GatewayServerTest, IdleConnectionIsClosedAfterTimeout) {
  auto options = test_options();
  options.idle_timeout_ms = 50;
  start(options);
  HttpConnection c(port_);
  EXPECT_EQ(c.request(http::verb::get, "/health").status, 200);
  // The server closes the connection: the read ends with EOF rather than blocking forever.
  char byte;
  boost::system::error_code ec;
  c.socket().read_some(boost::asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, boost::asio::error::eof);
}

TEST_F(GatewayServerTest, MetricsReportEngineStatsAndRequests) {
  protocol::Stats stats;
  stats.running = 3;
  stats.waiting = 7;
  stats.kv_usage = 0.25;
  stats.prefix_hit_rate = 0.5;
  stats.num_preemptions = 11;
  engine_->set_stats(stats);
  ASSERT_EQ(post_json(port_, "/v1/completions", R"({"prompt":"abcd","max_tokens":3})").status, 200);
  ASSERT_EQ(post_json(port_, "/v1/completions", R"({"prompt":"ab","max_tokens":2,"stream":true})").status, 200);
  ASSERT_EQ(post_json(port_, "/v1/completions", R"({"prompt":"x","max_tokens":0})").status, 400);
  ASSERT_EQ(post_json(port_, "/v1/completions", R"({"prompt":"TOO_LONG"})").status, 400);

  auto r = get(port_, "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type.rfind("text/plain", 0), 0u);
  const std::string& m = r.body;
  auto has = [&](const std::string& line) { return m.find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("zinfer_num_requests_running 3")) << m;
  EXPECT_TRUE(has("zinfer_num_requests_waiting 7"));
  EXPECT_TRUE(has("zinfer_kv_cache_usage_ratio 0.25"));
  EXPECT_TRUE(has("zinfer_prefix_cache_hit_rate 0.5"));
  EXPECT_TRUE(has("zinfer_num_preemptions_total 11"));
  EXPECT_TRUE(has("zinfer_prompt_tokens_total 6"));
  EXPECT_TRUE(has("zinfer_generation_tokens_total 5"));
  EXPECT_TRUE(has("zinfer_request_success_total{finished_reason=\"length\"} 2"));
  EXPECT_TRUE(has("zinfer_request_failure_total{code=\"400\"} 2"));
  EXPECT_TRUE(has("zinfer_time_to_first_token_seconds_count 2"));
  EXPECT_TRUE(has("zinfer_e2e_request_latency_seconds_count 2"));
  EXPECT_TRUE(has("zinfer_time_per_output_token_seconds_count 2"));
  EXPECT_TRUE(has("zinfer_time_to_first_token_seconds_bucket{le=\"+Inf\"} 2"));
  EXPECT_TRUE(has("# TYPE zinfer_e2e_request_latency_seconds histogram"));
  EXPECT_TRUE(has("zinfer_gateway_requests_in_flight 0"));
}

}  // namespace
}  // namespace zinfer::gateway::testing
