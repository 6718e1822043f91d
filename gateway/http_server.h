// The OpenAI-compatible HTTP/1.1 server: an acceptor and a small fixed pool of I/O threads that
// serve every connection (HttpSession), whatever their number. At most [server] max_connections
// are open at once (a connection past it gets a 503 and is closed); an accept that fails for lack
// of descriptors is retried after a back-off (connection_limit.h), never at once in a loop.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "gateway/http_context.h"

namespace zinfer::gateway {

class HttpServer {
 public:
  // engine must outlive the server. metrics and ids may be shared with the ZeroMQ endpoint.
  HttpServer(EngineClient& engine, HttpOptions options, std::shared_ptr<Metrics> metrics = nullptr,
             std::shared_ptr<RequestIds> ids = nullptr);
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the I/O threads; throws std::runtime_error naming the address on failure.
  void start();
  // Graceful shutdown's first step: new generation requests get 503 and /health 503 (a load
  // balancer moves away); requests in flight go on.
  void begin_drain() { ctx_->draining = true; }
  // Generation requests submitted and not finished.
  size_t in_flight();
  // Ends every request in flight as a failed one: a stream gets an SSE error event and [DONE], a
  // waiting client a 503 in OpenAI's error shape (`message` says why); each is aborted in the
  // engine. Waits up to `flush` for those answers to be written. Returns how many it ended.
  size_t fail_in_flight(const std::string& message, std::chrono::milliseconds flush);
  // Stops accepting, ends the requests in flight (fail_in_flight, "the server is stopping"),
  // joins the I/O threads. Idempotent.
  void stop();

  uint16_t port() const { return port_; }
  int io_threads() const { return static_cast<int>(threads_.size()); }
  Metrics& metrics() { return *ctx_->metrics; }
  // Connections open now; the cap in force (max_connections or its default).
  int64_t connections() const { return ctx_->connections.load(); }
  int64_t max_connections() const { return ctx_->max_connections; }
  // Accepts that failed (out of descriptors and others); connections refused over the cap.
  int64_t accept_failures() const { return accept_failures_.load(); }
  int64_t connections_refused() const { return connections_refused_.load(); }

 private:
  void accept();
  void accept_later();
  void refuse(boost::asio::ip::tcp::socket socket);

  std::shared_ptr<boost::asio::io_context> io_ = std::make_shared<boost::asio::io_context>();
  std::shared_ptr<HttpContext> ctx_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::unique_ptr<boost::asio::steady_timer> backoff_timer_;  // on the acceptor's strand
  int consecutive_failures_ = 0;                               // on the acceptor's strand
  std::atomic<int64_t> accept_failures_{0};
  std::atomic<int64_t> connections_refused_{0};
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool running_ = false;
};

}  // namespace zinfer::gateway
