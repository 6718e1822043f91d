#include "gateway/http_session.h"

#include <chrono>
#include <sstream>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "gateway/api_error.h"
#include "gateway/tokenize_api.h"
#include "runtime/logging.h"

namespace zinfer::gateway {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;

namespace {

constexpr std::size_t kHeaderLimit = 16 * 1024;

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// [server] log_requests: what vLLM logs of a request, its parameters (the prompt's size, not its text).
void log_request(const OpenAiRequest& r, uint64_t id) {
  const auto& q = r.request;
  const auto& s = q.sampling;
  size_t prompt_bytes = q.prompt.size();
  for (const auto& m : q.messages) prompt_bytes += m.content.size();
  runtime::logger("gateway")->info(
      "request {}: {} model={} prompt_bytes={} prompt_ids={} max_tokens={} n={} temperature={} top_p={} top_k={} "
      "seed={} stream={}",
      id, r.kind == ApiKind::kChat ? "chat" : "completion", q.model, prompt_bytes, q.prompt_ids.size(), s.max_tokens,
      s.n, s.temperature, s.top_p, s.top_k, s.seed, r.stream);
}

}  // namespace

HttpSession::HttpSession(asio::ip::tcp::socket socket, std::shared_ptr<HttpContext> ctx)
    : ctx_(std::move(ctx)),
      socket_(std::move(socket)),
      idle_timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()) {
  ++ctx_->connections;
}

HttpSession::~HttpSession() { uncount(); }

void HttpSession::uncount() {
  if (counted_) --ctx_->connections;
  counted_ = false;
}

void HttpSession::start() {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->read_next(); });
}

// ---- reading -----------------------------------------------------------------------------------

void HttpSession::read_next() {
  if (reading_ || closed_ || pipelined_) return;
  parser_.emplace();
  parser_->body_limit(ctx_->options.max_body_bytes);
  parser_->header_limit(kHeaderLimit);
  reading_ = true;
  if (!busy_) arm_idle_timer();
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void HttpSession::on_header(beast::error_code ec) {
  if (ec || closed_ || closing_) return on_read(ec);
  auto read_body = [self = shared_from_this()] {
    http::async_read(self->socket_, self->buffer_, *self->parser_,
                     [self](beast::error_code ec, std::size_t) { self->on_read(ec); });
  };
  // curl and others send "Expect: 100-continue" before a large body and wait for the go-ahead.
  const auto& header = parser_->get();
  if (!busy_ && beast::iequals(header[http::field::expect], "100-continue")) {
    if (parser_->content_length() && *parser_->content_length() > ctx_->options.max_body_bytes) {
      return on_read(http::error::body_limit);
    }
    static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    asio::async_write(socket_, asio::buffer(kContinue),
                      [self = shared_from_this(), read_body](beast::error_code ec, std::size_t) {
                        if (ec || self->closed_) return self->on_read(ec ? ec : asio::error::operation_aborted);
                        read_body();
                      });
    return;
  }
  read_body();
}

void HttpSession::on_read(beast::error_code ec) {
  reading_ = false;
  if (closed_) return;
  if (closing_) return close();
  if (ec) {
    // While a request runs, a failed read means the client is gone: close() aborts it.
    if (generation_ || busy_) return close();
    if (ec == http::error::body_limit) {
      return send_error(ApiError(413, "the request body exceeds " + std::to_string(ctx_->options.max_body_bytes) +
                                          " bytes"),
                        true);
    }
    if (ec.category() == http::make_error_code(http::error::bad_target).category() && ec != http::error::end_of_stream &&
        ec != http::error::partial_message) {
      return send_error(ApiError(400, "malformed HTTP request: " + ec.message()), true);
    }
    return close();
  }
  idle_timer_.cancel();
  Request req = parser_->release();
  if (busy_) {
    pipelined_ = std::move(req);
    return;
  }
  handle(std::move(req));
}

// ---- routing -----------------------------------------------------------------------------------

void HttpSession::handle(Request req) {
  busy_ = true;
  response_complete_ = false;
  stream_open_ = false;
  keep_alive_ = req.keep_alive();
  std::string target(req.target());
  if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
  const auto method = req.method();
  const auto authorization = req[http::field::authorization];
  if (!ctx_->api_keys.admits_http(target, std::string_view(authorization.data(), authorization.size()))) {
    return send_error(unauthorized_error());
  }

  auto only = [&](http::verb allowed) {
    if (method == allowed) return true;
    ApiError err(405, "method " + std::string(req.method_string()) + " is not allowed on " + target);
    send_error(err);
    return false;
  };

  if (target == "/v1/completions" || target == "/v1/chat/completions") {
    if (!only(http::verb::post)) return;
    return start_generation(target == "/v1/completions" ? ApiKind::kCompletions : ApiKind::kChat, req);
  }
  if (target == "/tokenize" || target == "/detokenize") {
    if (!only(http::verb::post)) return;
    return start_tokenize(target == "/detokenize", req);
  }
  if (target == "/version") {
    if (!only(http::verb::get)) return;
    return send_response(200, "application/json", json{{"version", ZINFER_VERSION}}.dump());
  }
  if (target == "/ping") {
    // vLLM's: GET or POST, answered like /health (200 with an empty body, or 503).
    if (method != http::verb::get && method != http::verb::post) {
      return send_error(ApiError(405, "method " + std::string(req.method_string()) + " is not allowed on " + target));
    }
    return send_response(ctx_->engine.healthy() ? 200 : 503, "application/json", "");
  }
  if (target == "/health") {
    if (!only(http::verb::get)) return;
    bool ok = ctx_->engine.healthy() && !ctx_->draining;
    return send_response(ok ? 200 : 503, "application/json", json{{"status", ok ? "ok" : "unavailable"}}.dump());
  }
  if (target == "/v1/models") {
    if (!only(http::verb::get)) return;
    // One card per name clients may use, the served name first (vLLM lists every served name).
    json data = json::array();
    std::vector<std::string> names{ctx_->options.served_model_name};
    names.insert(names.end(), ctx_->options.served_model_aliases.begin(), ctx_->options.served_model_aliases.end());
    for (const auto& name : names) {
      json model = {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "zinfer"}};
      if (ctx_->options.max_model_len > 0) model["max_model_len"] = ctx_->options.max_model_len;
      data.push_back(std::move(model));
    }
    return send_response(200, "application/json", json{{"object", "list"}, {"data", data}}.dump());
  }
  if (target == "/metrics") {
    if (!only(http::verb::get)) return;
    std::string text =
        ctx_->metrics->render(ctx_->engine.stats(), ctx_->limiter.in_flight(), ctx_->options.served_model_name);
    return send_response(200, "text/plain; version=0.0.4; charset=utf-8", std::move(text));
  }
  send_error(ApiError(404, "no such path: " + target));
}

void HttpSession::start_generation(ApiKind kind, const Request& req) {
  OpenAiRequest parsed;
  try {
    parsed = parse_openai_request(kind, req.body(), ctx_->options);
  } catch (const ApiError& e) {
    ctx_->metrics->observe_failure(e.status());
    return send_error(e);
  }
  if (ctx_->draining) {
    ctx_->metrics->observe_failure(503);
    return send_error(ApiError(503, "the server is shutting down; retry elsewhere"));
  }
  auto token = ctx_->limiter.try_acquire();
  if (!token) {
    ctx_->metrics->observe_failure(429);
    return send_error(ApiError(429, "the server is at its limit of " + std::to_string(ctx_->limiter.max()) +
                                        " requests in flight; retry later"));
  }
  auto tenant_slot = ctx_->tenants.try_acquire(tenant_of(req, parsed));
  if (!tenant_slot) {
    ctx_->metrics->observe_failure(429);
    return send_error(ApiError(429, "this tenant has " + std::to_string(ctx_->tenants.max()) +
                                        " requests in flight, its limit; retry later"));
  }
  tenant_slot_ = std::move(*tenant_slot);
  // One engine request per prompt (a completions batch has several).
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < std::max<size_t>(1, parsed.prompts.size()); ++i) ids.push_back(ctx_->ids->next());
  parsed.request.request_id = ids.front();
  if (ctx_->options.log_requests) log_request(parsed, ids.front());
  parsed.request.arrival_ns = steady_now_ns();
  generation_ = std::make_unique<Generation>(std::move(parsed), ids, *ctx_->metrics, std::move(*token));
  read_next();  // notices a disconnect while the request runs

  // The sink runs on an engine thread: it only posts the event to this connection's strand. It
  // owns the session and the io_context; members go in reverse order, the session first.
  struct SinkTarget {
    std::shared_ptr<asio::io_context> io;
    std::shared_ptr<HttpSession> session;
  };
  auto target = std::make_shared<SinkTarget>(SinkTarget{ctx_->io.lock(), shared_from_this()});
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t id = ids[i];
    DeltaSink sink = [target, id](EngineEvent event) {
      auto& session = target->session;
      // The posted handler holds the session only: holding the io_context from inside it would
      // keep the io_context alive through its own pending handlers.
      asio::post(session->socket_.get_executor(), [session, id, event = std::move(event)]() mutable {
        session->on_engine_event(id, std::move(event));
      });
    };
    ctx_->add_active(id, sink);
    try {
      ctx_->engine.submit(generation_->engine_request(i), std::move(sink));
    } catch (const std::exception& e) {
      for (size_t j = 0; j < ids.size(); ++j) {
        ctx_->remove_active(ids[j]);
        if (j < i) ctx_->engine.abort(ids[j]);
      }
      generation_.reset();
      tenant_slot_.release();
      ctx_->metrics->observe_failure(503);
      send_error(ApiError(503, std::string("the engine did not accept the request: ") + e.what()));
      return;
    }
  }
}

void HttpSession::start_tokenize(bool detokenize, const Request& req) {
  protocol::TokenizeRequest call;
  try {
    call = detokenize ? parse_detokenize_body(req.body(), ctx_->options) : parse_tokenize_body(req.body(), ctx_->options);
  } catch (const ApiError& e) {
    return send_error(e);
  }
  call.request_id = ctx_->ids->next();
  const bool strs = call.return_token_strs;
  auto session = shared_from_this();
  TokenizeSink sink = [session, detokenize, strs](TokenizeOutcome outcome) {
    // Like a generation's events: handled on this connection's strand.
    asio::post(session->socket_.get_executor(), [session, detokenize, strs, outcome = std::move(outcome)] {
      if (session->closed_) return;
      if (const auto* err = std::get_if<protocol::ErrorReply>(&outcome)) return session->send_error(api_error_from_reply(*err));
      const auto& reply = std::get<protocol::TokenizeReply>(outcome);
      const json body = detokenize ? detokenize_response(reply) : tokenize_response(reply, strs);
      session->send_response(200, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace));
    });
  };
  try {
    ctx_->engine.tokenize(std::move(call), std::move(sink));
  } catch (const std::exception& e) {
    send_error(ApiError(503, std::string("the engine did not accept the request: ") + e.what()));
  }
}

void HttpSession::on_engine_event(uint64_t id, EngineEvent event) {
  if (closed_ || !generation_ || !generation_->owns(id)) return;
  apply(generation_->on_event(id, event));
}

void HttpSession::apply(Generation::Reaction r) {
  using Kind = Generation::Reaction::Kind;
  // The request leaves `active` only once its last bytes are queued (connections_writing counts
  // them), so that a stop waiting for both never misses an answer on its way.
  struct Finish {
    HttpSession* s;
    std::vector<uint64_t> ids;
    ~Finish() {
      for (uint64_t id : ids) s->ctx_->remove_active(id);
    }
  } finish{this, r.finished ? generation_->engine_ids() : std::vector<uint64_t>{}};
  // An error in one prompt of a batch ends the response: the other prompts' requests stop too
  // (an id that already finished is ignored by the engine).
  if (r.finished && r.status != 200 && finish.ids.size() > 1) {
    for (uint64_t id : finish.ids) ctx_->engine.abort(id);
  }
  if (r.finished) {
    generation_.reset();
    tenant_slot_.release();
  }
  switch (r.kind) {
    case Kind::kNone:
      break;
    case Kind::kError:
      send_response(r.status, "application/json", std::move(r.data));
      return;
    case Kind::kBody:
      send_response(200, "application/json", std::move(r.data));
      return;
    case Kind::kStream:
      if (!stream_open_) {
        stream_open_ = true;
        open_stream();
      }
      // A chunk of no bytes would read as the last chunk and end the body early.
      if (!r.data.empty()) enqueue(Outgoing::Kind::kChunk, std::move(r.data));
      if (r.finished) {
        enqueue(Outgoing::Kind::kLastChunk, {});
        finish_response();
      }
      return;
  }
}

// ---- writing -----------------------------------------------------------------------------------

void HttpSession::send_response(int status, std::string content_type, std::string body, bool close_after) {
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  res.set(http::field::server, "zinfer");
  res.set(http::field::content_type, content_type);
  if (status == 405) res.set(http::field::allow, "GET, POST");
  if (status == 401) res.set(http::field::www_authenticate, "Bearer");
  if (close_after) close_after_response_ = true;
  res.keep_alive(keep_alive_ && !close_after_response_);
  res.body() = std::move(body);
  res.prepare_payload();
  std::ostringstream os;
  os << res;
  busy_ = true;
  enqueue(Outgoing::Kind::kBytes, os.str());
  finish_response();
}

// A streamed response: a header with `Transfer-Encoding: chunked`, written by Beast's serializer,
// then one chunk per event (http::make_chunk) and the last, empty chunk (http::make_chunk_last).
void HttpSession::open_stream() {
  stream_serializer_.reset();
  stream_header_.emplace(http::status::ok, 11);
  stream_header_->set(http::field::server, "zinfer");
  stream_header_->set(http::field::content_type, "text/event-stream");
  stream_header_->set(http::field::cache_control, "no-cache");
  stream_header_->chunked(true);
  stream_header_->set(http::field::connection, keep_alive_ ? "keep-alive" : "close");
  stream_serializer_.emplace(*stream_header_);
  enqueue(Outgoing::Kind::kStreamHeader, {});
}

void HttpSession::send_error(const ApiError& error, bool close_after) {
  send_response(error.status(), "application/json", error.to_json().dump(), close_after);
}

void HttpSession::enqueue(Outgoing::Kind kind, std::string bytes) {
  if (closed_) return;
  if (outbox_.empty()) ++ctx_->connections_writing;
  outbox_.push_back(Outgoing{kind, std::move(bytes)});
  do_write();
}

void HttpSession::finish_response() {
  response_complete_ = true;
  if (!keep_alive_) close_after_response_ = true;
  if (!writing_ && outbox_.empty()) on_response_done();
}

void HttpSession::do_write() {
  if (writing_ || outbox_.empty() || closed_) return;
  writing_ = true;
  write_timer_.expires_after(std::chrono::milliseconds(ctx_->options.write_timeout_ms));
  write_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    // A handler of an earlier write may run late; only a deadline that really passed counts.
    if (!ec && self->writing_ && self->write_timer_.expiry() <= std::chrono::steady_clock::now()) {
      self->close();  // the client stopped reading
    }
  });
  auto done = [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); };
  const Outgoing& out = outbox_.front();  // stays at the front, unchanged, until on_write
  switch (out.kind) {
    case Outgoing::Kind::kBytes:
      asio::async_write(socket_, asio::buffer(out.bytes), std::move(done));
      break;
    case Outgoing::Kind::kStreamHeader:
      http::async_write_header(socket_, *stream_serializer_, std::move(done));
      break;
    case Outgoing::Kind::kChunk:
      asio::async_write(socket_, http::make_chunk(asio::buffer(out.bytes)), std::move(done));
      break;
    case Outgoing::Kind::kLastChunk:
      asio::async_write(socket_, http::make_chunk_last(), std::move(done));
      break;
  }
}

void HttpSession::on_write(beast::error_code ec) {
  writing_ = false;
  write_timer_.cancel();
  if (closed_) return;
  if (ec) return close();
  outbox_.pop_front();
  if (!outbox_.empty()) return do_write();
  --ctx_->connections_writing;
  if (response_complete_) on_response_done();
}

void HttpSession::on_response_done() {
  busy_ = false;
  response_complete_ = false;
  if (close_after_response_) return close_gracefully();
  if (pipelined_) {
    Request next = std::move(*pipelined_);
    pipelined_.reset();
    handle(std::move(next));
    return;
  }
  if (reading_) {
    arm_idle_timer();
  } else {
    read_next();
  }
}

// ---- lifetime ----------------------------------------------------------------------------------

void HttpSession::arm_idle_timer() {
  idle_timer_.expires_after(std::chrono::milliseconds(ctx_->options.idle_timeout_ms));
  idle_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->closed_ || self->busy_) return;
    if (self->idle_timer_.expiry() <= std::chrono::steady_clock::now()) self->close();
  });
}

void HttpSession::close_gracefully() {
  // Closing a socket with unread input makes the kernel send a reset, which can destroy the
  // response still on its way (a 413 sent before the client finished its body): say we are
  // done, then read and drop what the client still sends until it closes, for a short while.
  closing_ = true;
  beast::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  idle_timer_.expires_after(std::chrono::seconds(2));
  idle_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) self->close();
  });
  if (!reading_) drain();  // a pending read ends in on_read, which closes
}

void HttpSession::drain() {
  reading_ = true;
  buffer_.consume(buffer_.size());
  socket_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
    self->reading_ = false;
    self->buffer_.commit(n);
    self->buffer_.consume(n);
    if (ec || self->closed_) return self->close();
    self->drain();
  });
}

void HttpSession::close() {
  if (closed_) return;
  closed_ = true;
  if (generation_) {
    const std::vector<uint64_t> ids = generation_->engine_ids();
    generation_->abandon();
    generation_.reset();
    tenant_slot_.release();
    for (uint64_t id : ids) {
      ctx_->remove_active(id);
      ctx_->engine.abort(id);
    }
  }
  beast::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_timer_.cancel();
  write_timer_.cancel();
  if (!outbox_.empty()) --ctx_->connections_writing;
  outbox_.clear();
  uncount();
}

std::string HttpSession::tenant_of(const Request& req, const OpenAiRequest& parsed) const {
  if (ctx_->options.tenant_key != "api_key") return parsed.request.tenant;
  // The key after "Bearer " (admits_http checked it when keys are required); "" without one.
  const auto header = req[http::field::authorization];
  std::string_view value(header.data(), header.size());
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size()) return "";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    const char c = value[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i]) return "";
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return std::string(value);
}

}  // namespace zinfer::gateway
