// The native client endpoint: a ZeroMQ ROUTER socket, served by one thread, speaking the zinfer
// envelope (docs/protocol.md). Clients (DEALER) send GenerateRequest and Abort with request ids of
// their own choosing; the endpoint maps (client identity, client id) to a gateway-unique id,
// forwards to the engine and streams TextDelta / ErrorReply back under the client's id.
#pragma once

#include <deque>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "gateway/api_keys.h"
#include "gateway/engine_client.h"
#include "gateway/in_flight.h"
#include "gateway/metrics.h"
#include "gateway/options.h"
#include "gateway/zmq_curve.h"

namespace zinfer::gateway {

class ZmqEndpoint {
 public:
  // engine must outlive the endpoint. context: the process's ZeroMQ context (one is made if null).
  ZmqEndpoint(EngineClient& engine, ZmqEndpointOptions options, std::shared_ptr<Metrics> metrics = nullptr,
              std::shared_ptr<RequestIds> ids = nullptr, zmq::context_t* context = nullptr);
  ~ZmqEndpoint();

  ZmqEndpoint(const ZmqEndpoint&) = delete;
  ZmqEndpoint& operator=(const ZmqEndpoint&) = delete;

  // Binds (throws std::runtime_error naming the address) and starts the serving thread.
  void start();
  // Graceful shutdown's first step: new GenerateRequests get ErrorReply 503 ("unavailable");
  // requests in flight go on.
  void begin_drain() { draining_ = true; }
  // Requests accepted and not finished.
  int64_t in_flight() const { return limiter_.in_flight(); }
  // Ends the requests in flight, each with ErrorReply 503 ("shutdown") to its client and an abort
  // to the engine, and joins the thread. Idempotent.
  void stop();

  // The bound address, with the port resolved when bind used "*".
  const std::string& endpoint() const { return endpoint_; }
  // With CURVE: the server's public key (Z85), which clients need; "" without.
  const std::string& curve_public_key() const { return curve_public_key_; }

  struct Inbox;  // engine events waiting for the serving thread (defined in the .cpp)

 private:
  struct Route {
    std::string identity;
    uint64_t client_id = 0;
    std::vector<bool> finished;  // per sample index
    size_t finished_count = 0;
    RequestTimer timer;
    InFlightLimiter::Token token;
  };

  void secure(zmq::socket_t& router);
  void run();
  void on_frame(const std::string& identity, const std::string& payload);
  void on_generate(const std::string& identity, protocol::GenerateRequest request);
  void on_abort(const std::string& identity, const protocol::Abort& abort);
  void on_engine_event(uint64_t id, EngineEvent event);
  void drain_inbox();
  // Sends, or queues behind what already waits for this client; a client whose send queue is
  // full has its requests failed (fail_slow_client), one that is gone has them aborted.
  void send(const std::string& identity, const std::string& bytes);
  enum class SendResult { kSent, kFull, kGone };
  SendResult try_send(const std::string& identity, const std::string& bytes);
  void fail_slow_client(const std::string& identity);
  void flush_backlogs();
  void send_error(const std::string& identity, uint64_t request_id, int code, const std::string& kind,
                  const std::string& message);
  void drop_client(const std::string& identity);
  void erase_route(uint64_t id);

  EngineClient& engine_;
  ZmqEndpointOptions options_;
  std::shared_ptr<Metrics> metrics_;
  std::shared_ptr<RequestIds> ids_;
  std::unique_ptr<zmq::context_t> own_context_;
  zmq::context_t* context_;
  std::unique_ptr<zmq::socket_t> router_;
  std::unique_ptr<ZapHandler> zap_;  // with CURVE: admits the listed client keys
  std::string curve_public_key_;
  std::shared_ptr<Inbox> inbox_;
  InFlightLimiter limiter_;
  ApiKeys api_keys_;
  std::atomic<bool> draining_{false};
  std::thread thread_;
  std::string endpoint_;

  // Owned by the serving thread.
  std::unordered_map<uint64_t, Route> routes_;
  std::map<std::pair<std::string, uint64_t>, uint64_t> by_client_;
  // Frames for clients whose send queue was full, oldest first, retried until they go out. While a
  // client has some, its new requests are refused (it is not reading what it has).
  std::unordered_map<std::string, std::deque<std::string>> backlog_;
};

}  // namespace zinfer::gateway
