#include "tests/bench/fake_openai_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace zinfer::bench::testing {
namespace {

void send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string hex(size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zx", n);
  return buf;
}

// Reads one HTTP request; returns false on a closed or malformed connection.
bool read_request(int fd, std::string& path, std::string& body, std::string& head_out) {
  std::string data;
  char buf[4096];
  size_t header_end = std::string::npos;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    data.append(buf, static_cast<size_t>(n));
  }
  const std::string head = data.substr(0, header_end);
  head_out = head;
  const auto sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
  path = head.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t length = 0;
  for (const char* key : {"Content-Length: ", "content-length: "}) {
    if (const auto p = head.find(key); p != std::string::npos) length = std::stoul(head.substr(p + std::strlen(key)));
  }
  body = data.substr(header_end + 4);
  while (body.size() < length) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    body.append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

FakeOpenAIServer::FakeOpenAIServer() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 256) != 0) {
    throw std::runtime_error("fake server: cannot listen on 127.0.0.1");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeOpenAIServer::~FakeOpenAIServer() {
  stop_ = true;
  acceptor_.join();
  for (auto& w : workers_) w.join();
  ::close(listen_fd_);
}

std::string FakeOpenAIServer::last_head() const {
  std::lock_guard lock(last_mutex_);
  return last_head_;
}

std::string FakeOpenAIServer::last_body() const {
  std::lock_guard lock(last_mutex_);
  return last_body_;
}

void FakeOpenAIServer::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    workers_.emplace_back([this, fd] {
      serve(fd);
      ::close(fd);
    });
  }
}

void FakeOpenAIServer::serve(int fd) {
  std::string path, body, head;
  if (!read_request(fd, path, body, head)) return;
  {
    std::lock_guard lock(last_mutex_);
    last_head_ = head;
    last_body_ = body;
  }
  const int now = ++in_flight_;
  for (int seen = max_in_flight_.load(); now > seen && !max_in_flight_.compare_exchange_weak(seen, now);) {
  }
  const auto req = nlohmann::json::parse(body);
  const bool chat = path == "/v1/chat/completions";
  const int n = req.value("max_tokens", 16);
  const std::string prompt = chat ? req["messages"][0]["content"].get<std::string>() : req["prompt"].get<std::string>();

  if (n == 13 || (!chat && path != "/v1/completions")) {
    const std::string err = R"({"error":{"message":"unlucky request","code":400}})";
    // Counted out (and as served) before the client can see the end, so that its next request
    // never overlaps and a test that reads the count after the client finished sees it.
    --in_flight_;
    ++served_;
    send_all(fd, "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(err.size()) + "\r\nConnection: close\r\n\r\n" + err);
    return;
  }
  // Completions: chunked framing; chat: the body runs until the connection closes.
  auto emit = [&](const std::string& event) {
    const std::string frame = "data: " + event + "\n\n";
    send_all(fd, chat ? frame : hex(frame.size()) + "\r\n" + frame + "\r\n");
  };
  send_all(fd, std::string("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n") +
                   (chat ? "Connection: close\r\n\r\n" : "Transfer-Encoding: chunked\r\n\r\n"));
  if (chat) emit(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})");
  for (int i = 0; i < n; i += 2) {
    std::string text(1, static_cast<char>('a' + i % 26));
    if (i + 1 < n) text.push_back(static_cast<char>('a' + (i + 1) % 26));
    nlohmann::json c;
    if (chat) c["choices"] = {{{"index", 0}, {"delta", {{"content", text}}}}};
    else c["choices"] = {{{"index", 0}, {"text", text}}};
    emit(c.dump());
    // Request 12 streams slowly, so that a client which timed chunks on completion of the whole
    // stream rather than on arrival would show.
    ::usleep(n == 12 ? 3000 : 200);
  }
  emit(nlohmann::json{{"choices", nlohmann::json::array()},
                      {"usage", {{"prompt_tokens", prompt.size()}, {"completion_tokens", n}}}}
           .dump());
  --in_flight_;
  ++served_;  // before the client can see the end (as above)
  emit("[DONE]");
  if (!chat) send_all(fd, "0\r\n\r\n");
}

}  // namespace zinfer::bench::testing
