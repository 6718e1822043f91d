#include "gateway/zmq_endpoint.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "gateway/api_error.h"
#include "gateway/openai_request.h"
#include "gateway/zmq_curve.h"
#include "protocol/envelope.h"

namespace zinfer::gateway {

// Engine sinks run on engine threads and may outlive the endpoint; they reach the serving thread
// through this mailbox and an eventfd the thread polls next to its socket.
struct ZmqEndpoint::Inbox {
  Inbox() : fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (fd < 0) throw std::runtime_error(std::string("gateway: eventfd failed: ") + std::strerror(errno));
  }
  ~Inbox() { ::close(fd); }

  void push(uint64_t id, EngineEvent event) {
    {
      std::lock_guard lock(mu);
      if (closed) return;
      events.emplace_back(id, std::move(event));
    }
    wake();
  }
  void wake() {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
  }
  std::vector<std::pair<uint64_t, EngineEvent>> take() {
    uint64_t count;
    [[maybe_unused]] auto n = ::read(fd, &count, sizeof count);
    std::lock_guard lock(mu);
    return std::exchange(events, {});
  }

  int fd;
  std::mutex mu;
  bool closed = false;
  bool stop = false;
  std::vector<std::pair<uint64_t, EngineEvent>> events;
};

ZmqEndpoint::ZmqEndpoint(EngineClient& engine, ZmqEndpointOptions options, std::shared_ptr<Metrics> metrics,
                         std::shared_ptr<RequestIds> ids, zmq::context_t* context)
    : engine_(engine),
      options_(std::move(options)),
      metrics_(metrics ? std::move(metrics) : std::make_shared<Metrics>()),
      ids_(ids ? std::move(ids) : std::make_shared<RequestIds>()),
      own_context_(context ? nullptr : std::make_unique<zmq::context_t>(1)),
      context_(context ? context : own_context_.get()),
      inbox_(std::make_shared<Inbox>()),
      limiter_(options_.max_in_flight),
      api_keys_(options_.api_keys) {}

ZmqEndpoint::~ZmqEndpoint() { stop(); }

void ZmqEndpoint::start() {
  if (thread_.joinable()) return;
  router_ = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::router);
  // Sending to a client that is gone fails (EHOSTUNREACH) instead of vanishing silently: that is
  // how the endpoint learns of a disconnect and aborts the client's requests.
  router_->set(zmq::sockopt::router_mandatory, 1);
  router_->set(zmq::sockopt::sndhwm, options_.send_high_water_mark);
  router_->set(zmq::sockopt::maxmsgsize, options_.max_message_bytes);
  router_->set(zmq::sockopt::linger, 0);
  secure(*router_);
  try {
    router_->bind(options_.bind);
  } catch (const zmq::error_t& e) {
    router_.reset();
    throw std::runtime_error("gateway: cannot bind the ZeroMQ endpoint to '" + options_.bind + "': " + e.what());
  }
  endpoint_ = router_->get(zmq::sockopt::last_endpoint);
  thread_ = std::thread([this] { run(); });
}

// CURVE when its keys are configured (gateway/zmq_curve.h); without them, API keys must not
// cross a network in clear, so an endpoint beyond loopback that requires keys does not start.
void ZmqEndpoint::secure(zmq::socket_t& router) {
  const bool secret = !options_.curve_secret_key_file.empty();
  const bool clients = !options_.curve_client_keys_file.empty();
  if (!secret && !clients) {
    if (!options_.api_keys.empty() && !is_local_zmq_endpoint(options_.bind)) {
      throw std::runtime_error(
          "gateway: the ZeroMQ endpoint " + options_.bind +
          " listens beyond this host's loopback and requires API keys, which would cross the network in clear: set "
          "[server] zmq_curve_secret_key_file and zmq_curve_client_keys_file (CURVE, docs/protocol.md), or bind it "
          "to a loopback address or an ipc:// path");
    }
    return;
  }
  if (!secret || !clients) {
    throw std::runtime_error(
        "gateway: [server] zmq_curve_secret_key_file and zmq_curve_client_keys_file go together (CURVE needs the "
        "server's secret key and the clients' public keys)");
  }
  if (options_.bind.rfind("inproc://", 0) == 0) {
    throw std::runtime_error("gateway: CURVE needs a tcp:// or ipc:// ZeroMQ endpoint, not " + options_.bind);
  }
  CurveKeys keys = load_curve_keys(options_.curve_secret_key_file, options_.curve_client_keys_file);
  zap_ = std::make_unique<ZapHandler>(*context_, keys.client_publics);
  router.set(zmq::sockopt::curve_server, 1);
  router.set(zmq::sockopt::curve_secretkey, keys.server_secret);
  router.set(zmq::sockopt::zap_domain, "zinfer");
  curve_public_key_ = keys.server_public;
}

void ZmqEndpoint::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(inbox_->mu);
    inbox_->stop = true;
  }
  inbox_->wake();
  thread_.join();
}

void ZmqEndpoint::run() {
  zmq::pollitem_t items[] = {{router_->handle(), 0, ZMQ_POLLIN, 0},
                             {nullptr, inbox_->fd, ZMQ_POLLIN, 0},
                             {zap_ ? zap_->socket().handle() : nullptr, 0, ZMQ_POLLIN, 0}};
  const size_t num_items = zap_ ? 3 : 2;
  for (;;) {
    // Frames held back for slow clients are retried every few milliseconds until they go out.
    zmq::poll(items, num_items, std::chrono::milliseconds(backlog_.empty() ? -1 : 5));
    if (zap_ && (items[2].revents & ZMQ_POLLIN)) zap_->handle();
    flush_backlogs();
    if (items[1].revents & ZMQ_POLLIN) {
      {
        std::lock_guard lock(inbox_->mu);
        if (inbox_->stop) break;
      }
      drain_inbox();
    }
    // Drain the socket fully: ZeroMQ's readiness is edge-triggered across poll calls.
    while (true) {
      std::vector<zmq::message_t> parts;
      zmq::message_t part;
      if (!router_->recv(part, zmq::recv_flags::dontwait)) break;
      parts.push_back(std::move(part));
      while (parts.back().more()) {
        zmq::message_t next;
        (void)router_->recv(next, zmq::recv_flags::none);
        parts.push_back(std::move(next));
      }
      std::string identity = parts[0].to_string();
      if (parts.size() != 2) {
        send_error(identity, 0, 400, "bad_frame:malformed",
                   "a message must be exactly one frame (got " + std::to_string(parts.size() - 1) + ")");
        continue;
      }
      on_frame(identity, parts[1].to_string());
    }
  }
  // Shutting down: no more events reach the clients, the engine forgets their requests, and each
  // client hears that its requests ended (an ErrorReply each, after what was already queued).
  {
    std::lock_guard lock(inbox_->mu);
    inbox_->closed = true;
    inbox_->events.clear();
  }
  flush_backlogs();
  for (auto& [id, route] : routes_) {
    engine_.abort(id);
    route.timer.fail(503);
    protocol::ErrorReply reply;
    reply.request_id = route.client_id;
    reply.code = 503;
    reply.kind = "shutdown";
    reply.message = "the server is stopping";
    (void)try_send(route.identity, protocol::encode(reply));
  }
  // Linger a moment so that those replies leave the socket before it closes.
  if (!routes_.empty()) router_->set(zmq::sockopt::linger, 1000);
  routes_.clear();
  by_client_.clear();
  backlog_.clear();
  router_.reset();
  zap_.reset();
}

void ZmqEndpoint::drain_inbox() {
  for (auto& [id, event] : inbox_->take()) on_engine_event(id, std::move(event));
}

void ZmqEndpoint::on_frame(const std::string& identity, const std::string& payload) {
  protocol::Frame frame;
  try {
    frame = protocol::open(payload);
  } catch (const protocol::ProtocolError& e) {
    auto reply = protocol::error_reply_for(e, 0);
    return send(identity, protocol::encode(reply));
  }
  try {
    switch (frame.type()) {
      case protocol::MessageType::kGenerateRequest:
        return on_generate(identity, frame.as<protocol::GenerateRequest>());
      case protocol::MessageType::kAbort:
        return on_abort(identity, frame.as<protocol::Abort>());
      case protocol::MessageType::kPing: {
        auto ping = frame.as<protocol::Ping>();
        return send(identity, protocol::encode(protocol::Pong{ping.seq, ping.sent_ns}));
      }
      case protocol::MessageType::kStatsRequest:
        return send(identity, protocol::encode(engine_.stats()));
      default:
        return send_error(identity, 0, 400, "unexpected_type",
                          std::string("the client endpoint does not accept ") + protocol::to_string(frame.type()));
    }
  } catch (const protocol::ProtocolError& e) {
    send(identity, protocol::encode(protocol::error_reply_for(e, 0)));
  }
}

void ZmqEndpoint::on_generate(const std::string& identity, protocol::GenerateRequest request) {
  const uint64_t client_id = request.request_id;
  // The key first, so that a client without one learns nothing else about the endpoint; it goes
  // no further than here.
  if (!api_keys_.accepts(request.api_key)) {
    metrics_->observe_failure(401);
    return send_error(identity, client_id, 401, "unauthorized",
                      "a valid API key is required in the GenerateRequest's api_key field");
  }
  request.api_key.clear();
  if (client_id == 0) {
    return send_error(identity, 0, 400, "invalid_request", "request_id must be non-zero");
  }
  if (by_client_.count({identity, client_id})) {
    return send_error(identity, client_id, 400, "invalid_request",
                      "request_id " + std::to_string(client_id) + " is already in flight on this connection");
  }
  try {
    if (!request.model.empty() && request.model != options_.served_model_name) {
      throw ApiError(404, "the model '" + request.model + "' does not exist", "model");
    }
    if (request.model.empty()) request.model = options_.served_model_name;
    validate_generate_request(request, options_.max_model_len);
  } catch (const ApiError& e) {
    metrics_->observe_failure(e.status());
    return send_error(identity, client_id, e.status(), "invalid_request", e.what());
  }
  if (draining_) {
    metrics_->observe_failure(503);
    return send_error(identity, client_id, 503, "unavailable", "the server is shutting down; retry elsewhere");
  }
  if (backlog_.count(identity)) {
    metrics_->observe_failure(429);
    return send_error(identity, client_id, 429, "slow_reader",
                      "this client has unread replies waiting (its send queue was full): read them first");
  }
  auto token = limiter_.try_acquire();
  if (!token) {
    metrics_->observe_failure(429);
    return send_error(identity, client_id, 429, "overloaded",
                      "the endpoint is at its limit of " + std::to_string(limiter_.max()) + " requests in flight");
  }

  const uint64_t id = ids_->next();
  const int n = request.sampling.n;
  Route route{identity, client_id, std::vector<bool>(n, false), 0, RequestTimer(*metrics_, n), std::move(*token)};
  routes_.emplace(id, std::move(route));
  by_client_[{identity, client_id}] = id;

  request.request_id = id;
  request.arrival_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now().time_since_epoch()).count();
  std::shared_ptr<Inbox> inbox = inbox_;
  try {
    engine_.submit(std::move(request), [inbox, id](EngineEvent event) { inbox->push(id, std::move(event)); });
  } catch (const std::exception& e) {
    erase_route(id);
    metrics_->observe_failure(503);
    send_error(identity, client_id, 503, "unavailable", std::string("the engine did not accept the request: ") + e.what());
  }
}

void ZmqEndpoint::on_abort(const std::string& identity, const protocol::Abort& abort) {
  auto it = by_client_.find({identity, abort.request_id});
  if (it == by_client_.end()) return;  // already finished: the client has or will get its last delta
  const uint64_t id = it->second;
  engine_.abort(id);
  Route& route = routes_.at(id);
  // The client learns that its request ended: each unfinished sample gets a last, empty delta.
  // They go out after the route is erased: a send that finds the client gone drops the client's
  // routes, this one included (found by the soak under AddressSanitizer).
  std::vector<std::string> last_deltas;
  for (size_t i = 0; i < route.finished.size(); ++i) {
    if (route.finished[i]) continue;
    protocol::TextDelta last;
    last.request_id = route.client_id;
    last.index = static_cast<int32_t>(i);
    last.finish_reason = "abort";
    route.timer.on_delta(last);
    last_deltas.push_back(protocol::encode(last));
  }
  route.timer.finish();
  erase_route(id);
  for (const std::string& bytes : last_deltas) send(identity, bytes);
}

void ZmqEndpoint::on_engine_event(uint64_t id, EngineEvent event) {
  auto it = routes_.find(id);
  if (it == routes_.end()) return;  // aborted, or its client went away
  Route& route = it->second;
  const std::string identity = route.identity;
  if (auto* reply = std::get_if<protocol::ErrorReply>(&event)) {
    reply->request_id = route.client_id;
    route.timer.fail(reply->code);
    erase_route(id);
    return send(identity, protocol::encode(*reply));
  }
  auto& delta = std::get<protocol::TextDelta>(event);
  if (delta.index < 0 || static_cast<size_t>(delta.index) >= route.finished.size() || route.finished[delta.index]) {
    return;  // nothing may follow a sample's last delta
  }
  delta.request_id = route.client_id;
  route.timer.on_delta(delta);
  bool finished = !delta.finish_reason.empty();
  if (finished) {
    route.finished[delta.index] = true;
    ++route.finished_count;
  }
  if (route.finished_count == route.finished.size()) {
    route.timer.finish();
    erase_route(id);
  }
  send(identity, protocol::encode(delta));
}

ZmqEndpoint::SendResult ZmqEndpoint::try_send(const std::string& identity, const std::string& bytes) {
  try {
    // The identity frame is where the ROUTER picks the client's queue: a full queue fails there
    // (EAGAIN: no value), before anything of the message is queued.
    if (!router_->send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
      return SendResult::kFull;
    }
    (void)router_->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    return SendResult::kSent;
  } catch (const zmq::error_t&) {
    return SendResult::kGone;  // EHOSTUNREACH: the client is gone
  }
}

void ZmqEndpoint::send(const std::string& identity, const std::string& bytes) {
  if (auto it = backlog_.find(identity); it != backlog_.end()) {
    // Bounded: a backlog holds the frame that did not fit, one ErrorReply per request the client
    // had (at most max_in_flight) and the answers to what it sent since. A client that sends this
    // much more without reading is treated as gone.
    if (it->second.size() >= static_cast<size_t>(limiter_.max()) + 1024) {
      backlog_.erase(it);
      return;
    }
    it->second.push_back(bytes);
    return;
  }
  switch (try_send(identity, bytes)) {
    case SendResult::kSent:
      return;
    case SendResult::kGone:
      return drop_client(identity);  // nothing can reach it: its requests are aborted
    case SendResult::kFull:
      backlog_[identity].push_back(bytes);
      return fail_slow_client(identity);
  }
}

void ZmqEndpoint::fail_slow_client(const std::string& identity) {
  // A client that does not read its replies would hold its requests' KV blocks and a share of
  // every step for nothing, and its queue only grows: its requests end now, each with an
  // ErrorReply that waits in its backlog behind what it has not read yet.
  std::vector<uint64_t> ids;
  for (auto it = by_client_.lower_bound({identity, 0}); it != by_client_.end() && it->first.first == identity; ++it) {
    ids.push_back(it->second);
  }
  for (uint64_t id : ids) {
    engine_.abort(id);
    Route& route = routes_.at(id);
    const uint64_t client_id = route.client_id;
    route.timer.fail(429);
    erase_route(id);
    send_error(identity, client_id, 429, "slow_reader",
               "the client did not read its replies and its send queue (" +
                   std::to_string(options_.send_high_water_mark) + " frames) filled up: the request was cancelled");
  }
}

void ZmqEndpoint::flush_backlogs() {
  for (auto it = backlog_.begin(); it != backlog_.end();) {
    auto& frames = it->second;
    SendResult r = SendResult::kSent;
    while (!frames.empty() && (r = try_send(it->first, frames.front())) == SendResult::kSent) frames.pop_front();
    // Sent in full, or the client is gone (its requests were ended when the backlog began).
    if (frames.empty() || r == SendResult::kGone) {
      it = backlog_.erase(it);
    } else {
      ++it;
    }
  }
}

void ZmqEndpoint::send_error(const std::string& identity, uint64_t request_id, int code, const std::string& kind,
                             const std::string& message) {
  protocol::ErrorReply reply;
  reply.request_id = request_id;
  reply.code = code;
  reply.kind = kind;
  reply.message = message;
  send(identity, protocol::encode(reply));
}

void ZmqEndpoint::drop_client(const std::string& identity) {
  std::vector<uint64_t> ids;
  for (auto it = by_client_.lower_bound({identity, 0}); it != by_client_.end() && it->first.first == identity; ++it) {
    ids.push_back(it->second);
  }
  for (uint64_t id : ids) {
    engine_.abort(id);
    routes_.at(id).timer.finish();
    erase_route(id);
  }
}

void ZmqEndpoint::erase_route(uint64_t id) {
  auto it = routes_.find(id);
  if (it == routes_.end()) return;
  by_client_.erase({it->second.identity, it->second.client_id});
  routes_.erase(it);
}

}  // namespace zinfer::gateway
