#include "gateway/http_server.h"

#include <stdexcept>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "gateway/api_error.h"
#include "gateway/connection_limit.h"
#include "gateway/http_session.h"
#include "runtime/logging.h"

namespace zinfer::gateway {

namespace asio = boost::asio;
using asio::ip::tcp;

HttpServer::HttpServer(EngineClient& engine, HttpOptions options, std::shared_ptr<Metrics> metrics,
                       std::shared_ptr<RequestIds> ids)
    : ctx_(std::make_shared<HttpContext>(engine, std::move(options),
                                         metrics ? std::move(metrics) : std::make_shared<Metrics>(),
                                         ids ? std::move(ids) : std::make_shared<RequestIds>())) {
  ctx_->io = io_;
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::start() {
  if (running_) return;
  const HttpOptions& o = ctx_->options;
  if (o.io_threads < 1) throw std::runtime_error("gateway: io_threads must be at least 1");
  const int64_t descriptors = raise_descriptor_limit();
  ctx_->max_connections = o.max_connections > 0 ? o.max_connections : default_max_connections(descriptors);
  if (ctx_->max_connections >= descriptors) {
    runtime::logger("gateway")->warn(
        "[server] max_connections {} is not below the descriptor limit {} (ulimit -n): accepts will fail for lack "
        "of descriptors before the cap answers 503",
        ctx_->max_connections, descriptors);
  }
  boost::system::error_code ec;
  auto address = asio::ip::make_address(o.host, ec);
  if (ec) throw std::runtime_error("gateway: bad HTTP host '" + o.host + "': " + ec.message());
  tcp::endpoint endpoint(address, o.port);
  acceptor_ = std::make_unique<tcp::acceptor>(asio::make_strand(*io_));
  backoff_timer_ = std::make_unique<asio::steady_timer>(acceptor_->get_executor());
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error("gateway: cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message());
  }
  port_ = acceptor_->local_endpoint().port();
  running_ = true;
  accept();
  for (int i = 0; i < o.io_threads; ++i) {
    threads_.emplace_back([io = io_] { io->run(); });
  }
}

void HttpServer::accept() {
  // Each connection gets its own strand: its handlers never run concurrently, on any I/O thread.
  acceptor_->async_accept(asio::make_strand(*io_), [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;
    if (ec) {
      ++accept_failures_;
      if (ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
          ec == asio::error::no_buffer_space || ec == asio::error::no_memory) {
        // The pending connection stays queued: accepting again at once would fail the same way
        // and spin. It is accepted once a descriptor is free again.
        return accept_later();
      }
      return accept();  // another error concerns that one connection only
    }
    consecutive_failures_ = 0;
    if (ctx_->connections.load() >= ctx_->max_connections) {
      refuse(std::move(socket));
    } else {
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<HttpSession>(std::move(socket), ctx_)->start();
    }
    accept();
  });
}

void HttpServer::accept_later() {
  const auto wait = accept_backoff(++consecutive_failures_);
  if (consecutive_failures_ == 1) {
    runtime::logger("gateway")->warn("out of descriptors accepting a connection (ulimit -n): retrying in {} ms",
                                     wait.count());
  }
  backoff_timer_->expires_after(wait);
  backoff_timer_->async_wait([this](boost::system::error_code ec) {
    if (ec || !acceptor_->is_open()) return;
    accept();
  });
}

// Over max_connections: one 503 in OpenAI's error shape, written without waiting (a client that
// does not read gets nothing rather than holding the acceptor), then the connection is closed.
void HttpServer::refuse(tcp::socket socket) {
  ++connections_refused_;
  static const std::string kResponse = [] {
    const std::string body =
        ApiError(503, "the server is at its limit of open connections; retry later").to_json().dump();
    return "HTTP/1.1 503 Service Unavailable\r\nServer: zinfer\r\nContent-Type: application/json\r\n"
           "Connection: close\r\nRetry-After: 1\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }();
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  if (!ec) socket.write_some(asio::buffer(kResponse), ec);
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.close(ec);
}

size_t HttpServer::in_flight() {
  std::lock_guard lock(ctx_->active_mu);
  return ctx_->active.size();
}

size_t HttpServer::fail_in_flight(const std::string& message, std::chrono::milliseconds flush) {
  std::unordered_map<uint64_t, DeltaSink> active;
  {
    std::lock_guard lock(ctx_->active_mu);
    active = ctx_->active;  // each leaves `active` when its connection has queued the error
  }
  for (auto& [id, sink] : active) {
    ctx_->engine.abort(id);
    protocol::ErrorReply reply;
    reply.request_id = id;
    reply.code = 503;
    reply.kind = "shutdown";
    reply.message = message;
    sink(std::move(reply));  // handled on the connection's strand, as the engine's events are
  }
  // Waits until each connection has taken its error and written what it had to write.
  const auto deadline = std::chrono::steady_clock::now() + flush;
  while (std::chrono::steady_clock::now() < deadline && (in_flight() > 0 || ctx_->connections_writing > 0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return active.size();
}

void HttpServer::stop() {
  if (!running_) return;
  running_ = false;
  ctx_->draining = true;
  // On the acceptor's strand: an accept may be pending there.
  asio::post(acceptor_->get_executor(), [this] {
    boost::system::error_code ignored;
    acceptor_->close(ignored);
    backoff_timer_->cancel();
  });
  fail_in_flight("the server is stopping", std::chrono::seconds(2));
  {
    std::lock_guard lock(ctx_->active_mu);
    for (auto& [id, sink] : ctx_->active) ctx_->engine.abort(id);  // connections that did not answer in time
    ctx_->active.clear();
  }
  io_->stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
  backoff_timer_.reset();
  acceptor_.reset();
  // Destroying the io_context destroys the sessions' pending handlers and so closes their
  // sockets; sinks the engine still holds keep it until they go.
  io_.reset();
}

}  // namespace zinfer::gateway
