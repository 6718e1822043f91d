// A tiny OpenAI-compatible streaming server for the serve tests, on raw sockets at 127.0.0.1 on a
// free port. For a request asking max_tokens = n it streams n letter tokens, two per chunk (so
// multi-token chunks are exercised), then a usage chunk and [DONE]. /v1/completions answers with
// chunked transfer encoding, /v1/chat/completions with a role-only first chunk and a body that
// ends when the connection closes. max_tokens = 13 gets an HTTP 400; max_tokens = 12 streams with
// 3 ms between chunks. It records the largest number of requests it served at once.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zinfer::bench::testing {

class FakeOpenAIServer {
 public:
  FakeOpenAIServer();
  ~FakeOpenAIServer();
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int max_in_flight() const { return max_in_flight_.load(); }
  int requests_served() const { return served_.load(); }
  // The head (request line and headers) and body of the last request served.
  std::string last_head() const;
  std::string last_body() const;

 private:
  void accept_loop();
  void serve(int fd);
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> in_flight_{0}, max_in_flight_{0}, served_{0};
  mutable std::mutex last_mutex_;
  std::string last_head_, last_body_;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace zinfer::bench::testing
