// Connection and tenant bounds of the HTTP server: past [server] max_connections a connection gets
// a 503 and is closed, without the acceptor spinning, and the others are served; out of
// descriptors, the acceptor backs off instead of retrying in a loop; past max_inflight_per_tenant a
// tenant's new requests get 429 in OpenAI's shape while other tenants are served.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "gateway/connection_limit.h"
#include "server_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using namespace std::chrono_literals;
namespace http = boost::beast::http;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// A plain TCP socket, connected when `connect_now`; -1 when no descriptor was left.
int tcp_socket(uint16_t port, bool connect_now = true) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || !connect_now) return fd;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool connect_fd(int fd, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

// Sends a raw request and reads until the server closes or `limit` bytes came.
std::string talk(int fd, const std::string& request, size_t limit = 1 << 16) {
  if (!request.empty()) (void)!::write(fd, request.data(), request.size());
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string all;
  char buf[4096];
  while (all.size() < limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    all.append(buf, static_cast<size_t>(n));
    if (all.find("\r\n\r\n") != std::string::npos && all.find("\"error\"") != std::string::npos) break;
    if (all.find("{\"status\"") != std::string::npos) break;
  }
  return all;
}

void need_descriptors(rlim_t n) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < n) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, n);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < n) GTEST_SKIP() << "the descriptor limit (ulimit -n " << files.rlim_max << ") is too low";
}

bool wait_for(const std::function<bool()>& ok, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return ok();
}

TEST(ConnectionLimit, DefaultLeavesHeadroomBelowTheDescriptorLimit) {
  EXPECT_EQ(default_max_connections(1024), 1024 - 102);
  EXPECT_EQ(default_max_connections(200), 200 - 64);
  EXPECT_EQ(default_max_connections(1 << 20), (1 << 20) - (1 << 20) / 10);
  EXPECT_EQ(default_max_connections(10), 1);
  EXPECT_EQ(accept_backoff(1), 10ms);
  EXPECT_EQ(accept_backoff(2), 20ms);
  EXPECT_EQ(accept_backoff(50), 1000ms);
  // The soft limit is raised to the hard one.
  rlimit files{};
  const int64_t now = raise_descriptor_limit();
  getrlimit(RLIMIT_NOFILE, &files);
  EXPECT_EQ(static_cast<rlim_t>(now), files.rlim_cur);
  EXPECT_EQ(files.rlim_cur, files.rlim_max);
}

// 2,000 connections past a cap of 100 idle ones: each gets a 503 and is closed, the server burns
// no CPU while they sit there, and once idle ones go, new clients are served.
TEST_F(GatewayServerTest, OverMaxConnectionsGet503WithoutSpinning) {
  need_descriptors(2600);
  HttpOptions o = test_options();
  o.max_connections = 100;
  start(o);
  EXPECT_EQ(server_->max_connections(), 100);
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    idle.push_back(tcp_socket(port_));
    ASSERT_GE(idle.back(), 0);
  }
  ASSERT_TRUE(wait_for([&] { return server_->connections() == 100; }, 10s)) << server_->connections();
  std::vector<int> extra;
  for (int i = 0; i < 2000; ++i) {
    const int fd = tcp_socket(port_);
    ASSERT_GE(fd, 0) << "connection " << i;
    extra.push_back(fd);
  }
  ASSERT_TRUE(wait_for([&] { return server_->connections_refused() == 2000; }, 20s)) << server_->connections_refused();
  for (int i = 0; i < 2000; i += 400) {
    const std::string reply = talk(extra[static_cast<size_t>(i)], "");
    EXPECT_EQ(reply.rfind("HTTP/1.1 503", 0), 0u) << reply;
    EXPECT_NE(reply.find("\"error\""), std::string::npos) << reply;
  }
  // 2,100 connections open at the client side, 100 at the server: nothing to do, nothing done.
  const double cpu_before = cpu_seconds();
  std::this_thread::sleep_for(1500ms);
  EXPECT_LT(cpu_seconds() - cpu_before, 0.3);
  EXPECT_EQ(server_->connections(), 100);
  // Room again: a new client is served.
  for (int i = 0; i < 10; ++i) ::close(idle[static_cast<size_t>(i)]);
  ASSERT_TRUE(wait_for([&] { return server_->connections() <= 90; }, 10s));
  EXPECT_EQ(get(port_, "/health").status, 200);
  for (size_t i = 10; i < idle.size(); ++i) ::close(idle[i]);
  for (int fd : extra) ::close(fd);
}

int lowest_free_descriptor() {
  for (int fd = 0;; ++fd) {
    if (fcntl(fd, F_GETFD) == -1) return fd;
  }
}

// Out of descriptors (the soft limit lowered under the server's feet): pending connections wait in
// the listen queue while accept retries after a growing back-off, a handful of times a second, not
// in a loop; once descriptors are free again they are accepted and served.
TEST_F(GatewayServerTest, AcceptBacksOffWhenOutOfDescriptors) {
  std::vector<int> clients;
  for (int i = 0; i < 8; ++i) {
    clients.push_back(tcp_socket(port_, /*connect_now=*/false));
    ASSERT_GE(clients.back(), 0);
  }
  rlimit saved{};
  getrlimit(RLIMIT_NOFILE, &saved);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(lowest_free_descriptor());  // no descriptor can be made now
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  for (int fd : clients) ASSERT_TRUE(connect_fd(fd, port_));  // the kernel queues them; accept fails
  const int64_t failures_before = server_->accept_failures();
  const double cpu_before = cpu_seconds();
  std::this_thread::sleep_for(1500ms);
  const double cpu = cpu_seconds() - cpu_before;
  const int64_t failures = server_->accept_failures() - failures_before;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_GE(failures, 1);
  EXPECT_LE(failures, 20);  // 10, 20, 40 ... 1000 ms apart: about 8 in 1.5 s
  EXPECT_LT(cpu, 0.3);
  for (int fd : clients) {
    const std::string reply = talk(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
    ::close(fd);
  }
}

std::string hang_request(const std::string& user) {
  return R"({"prompt":"HANG","user":")" + user + R"("})";
}

// The per-tenant cap: tenant "a" at its cap of 2 gets 429 in
// OpenAI's error shape, tenant "b" is served meanwhile, and "a" is admitted again once one of its
// requests ended.
TEST_F(GatewayServerTest, TenantOverItsCapGets429OthersServed) {
  HttpOptions o = test_options();
  o.max_in_flight_per_tenant = 2;
  start(o);
  HttpConnection a1(port_), a2(port_);
  a1.send(http::verb::post, "/v1/completions", hang_request("a"));
  a2.send(http::verb::post, "/v1/completions", hang_request("a"));
  ASSERT_TRUE(engine_->wait_submitted(2, 10s));
  HttpReply third = post_json(port_, "/v1/completions", hang_request("a"));
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(third.json()["error"]["code"], 429);
  EXPECT_NE(third.json()["error"]["message"].get<std::string>().find("tenant"), std::string::npos);
  HttpConnection b1(port_);
  b1.send(http::verb::post, "/v1/completions", hang_request("b"));
  ASSERT_TRUE(engine_->wait_submitted(3, 10s));
  // a1's and a2's requests reach the engine in either order: closing a1 aborts one of the two.
  const uint64_t id0 = engine_->submitted()[0].request_id, id1 = engine_->submitted()[1].request_id;
  a1.close();
  ASSERT_TRUE(wait_for(
      [&] {
        const std::set<uint64_t> gone = engine_->aborted();
        return gone.count(id0) != 0 || gone.count(id1) != 0;
      },
      10s));
  HttpConnection a3(port_);
  bool admitted = wait_for(
      [&] {
        HttpReply r = post_json(port_, "/v1/completions", R"({"prompt":"x","max_tokens":2,"user":"a"})");
        return r.status == 200;
      },
      10s);
  EXPECT_TRUE(admitted);
}

// tenant_key = "api_key": the tenant is the key presented, whatever the `user` field says.
TEST_F(GatewayServerTest, TenantByApiKey) {
  HttpOptions o = test_options();
  o.max_in_flight_per_tenant = 1;
  o.tenant_key = "api_key";
  o.api_keys = {"key-one", "key-two"};
  start(o);
  auto hang = [&](const std::string& key, const std::string& user) {
    const std::string body = hang_request(user);
    return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  const int first = tcp_socket(port_);
  (void)!::write(first, hang("key-one", "u1").data(), hang("key-one", "u1").size());
  ASSERT_TRUE(engine_->wait_submitted(1, 10s));
  const int second = tcp_socket(port_);
  const std::string refused = talk(second, hang("key-one", "u2"));
  EXPECT_EQ(refused.rfind("HTTP/1.1 429", 0), 0u) << refused;
  const int other = tcp_socket(port_);
  (void)!::write(other, hang("key-two", "u1").data(), hang("key-two", "u1").size());
  EXPECT_TRUE(engine_->wait_submitted(2, 10s));
  for (int fd : {first, second, other}) ::close(fd);
}

}  // namespace
}  // namespace zinfer::gateway::testing
