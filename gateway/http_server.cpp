#include "gateway/http_server.h"

#include <stdexcept>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "gateway/http_session.h"

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
  boost::system::error_code ec;
  auto address = asio::ip::make_address(o.host, ec);
  if (ec) throw std::runtime_error("gateway: bad HTTP host '" + o.host + "': " + ec.message());
  tcp::endpoint endpoint(address, o.port);
  acceptor_ = std::make_unique<tcp::acceptor>(asio::make_strand(*io_));
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
    if (!ec) {
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<HttpSession>(std::move(socket), ctx_)->start();
    }
    // An error on one accept (e.g. out of descriptors) must not stop the server.
    accept();
  });
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
  acceptor_.reset();
  // Destroying the io_context destroys the sessions' pending handlers and so closes their
  // sockets; sinks the engine still holds keep it until they go.
  io_.reset();
}

}  // namespace zinfer::gateway
