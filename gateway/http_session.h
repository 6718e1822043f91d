// One HTTP/1.1 connection. All of its work runs on its strand, so a connection needs no thread of
// its own: an idle keep-alive connection is a socket and a pending read.
//
// While a request runs, the engine's sink holds the session (it may have no I/O pending when a
// pipelined request waits); the engine drops the sink when the request ends or is aborted.
//
// The session always keeps a read pending while a generation runs: that read notices the client
// going away (and the request is aborted) or receives a pipelined request, which waits until the
// current response is complete.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>

#include "gateway/api_error.h"
#include "gateway/generation.h"
#include "gateway/http_context.h"

namespace zinfer::gateway {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;

  // Counts itself in ctx->connections until it is closed (or destroyed).
  HttpSession(boost::asio::ip::tcp::socket socket, std::shared_ptr<HttpContext> ctx);
  ~HttpSession();
  void start();

 private:
  void read_next();
  void on_header(boost::beast::error_code ec);
  void on_read(boost::beast::error_code ec);
  void handle(Request req);
  void start_generation(ApiKind kind, const Request& req);
  void start_tokenize(bool detokenize, const Request& req);  // /tokenize, /detokenize
  void on_engine_event(uint64_t id, EngineEvent event);
  void apply(Generation::Reaction reaction);

  void send_response(int status, std::string content_type, std::string body, bool close_after = false);
  void send_error(const ApiError& error, bool close_after = false);
  // What goes out, in order: whole serialized responses, or the parts of a streamed one.
  struct Outgoing {
    enum class Kind { kBytes, kStreamHeader, kChunk, kLastChunk } kind;
    std::string bytes;  // kBytes: the response; kChunk: the chunk's data
  };
  void open_stream();
  void enqueue(Outgoing::Kind kind, std::string bytes);
  void finish_response();
  void do_write();
  void on_write(boost::beast::error_code ec);
  void on_response_done();

  void arm_idle_timer();
  void close_gracefully();
  void drain();
  void close();
  void uncount();
  // The tenant of a request for max_inflight_per_tenant ([server] tenant_key).
  std::string tenant_of(const Request& req, const OpenAiRequest& parsed) const;

  std::shared_ptr<HttpContext> ctx_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer write_timer_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::optional<Request> pipelined_;
  std::unique_ptr<Generation> generation_;
  TenantLimiter::Token tenant_slot_;  // the running generation's slot of its tenant's cap
  bool counted_ = true;               // still counted in ctx_->connections

  std::deque<Outgoing> outbox_;
  // The header of the streamed response being written and Beast's serializer of it.
  std::optional<boost::beast::http::response<boost::beast::http::empty_body>> stream_header_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::empty_body>> stream_serializer_;
  bool reading_ = false;
  bool writing_ = false;
  bool busy_ = false;               // a request is being answered
  bool response_complete_ = false;  // its last bytes are in the outbox
  bool stream_open_ = false;        // the SSE header of the current response went out
  bool keep_alive_ = true;
  bool close_after_response_ = false;
  bool closing_ = false;            // the response that ends the connection is out
  bool closed_ = false;
};

}  // namespace zinfer::gateway
