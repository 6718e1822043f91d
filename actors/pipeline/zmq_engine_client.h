// The gateway's EngineClient over ZeroMQ: submit() pushes a GenerateRequest to the tokenizer,
// tokenize() a TokenizeRequest (answered by a TokenizeReply or an ErrorReply on the same socket),
// abort() pushes an Abort to the scheduler, and the events of every request (TextDelta,
// ErrorReply) plus the scheduler's Stats arrive on one PULL socket bound at endpoints.gateway,
// which the gateway actor's loop reads and hands to dispatch().
//
// healthy() is false while the scheduler's Stats are older than 5 s or an actor is down.
//
// Threads: submit/abort/stats run on the HTTP and ZeroMQ-endpoint threads (a mutex guards the two
// sending sockets and the table of sinks); dispatch runs on the gateway actor's thread.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include <zmq.hpp>

#include "gateway/engine_client.h"
#include "runtime/peer_notice.h"
#include "runtime/runtime_config.h"

namespace zinfer::actors {

class ZmqEngineClient : public gateway::EngineClient {
 public:
  explicit ZmqEngineClient(const runtime::EndpointsConfig& endpoints);

  void submit(protocol::GenerateRequest request, gateway::DeltaSink sink) override;
  void abort(uint64_t request_id) override;
  void tokenize(protocol::TokenizeRequest request, gateway::TokenizeSink sink) override;
  protocol::Stats stats() override;
  bool healthy() override;

  // The socket the pipeline answers on; the owner polls it and calls dispatch() when readable.
  zmq::socket_t& events_socket() { return events_; }
  void dispatch();

  // Supervision (docs/architecture.md, I38; zmq_engine_client_peers.cpp), on the gateway actor's
  // thread. "down X": every request in flight ends now with an ErrorReply 503 (kind
  // "actor_restarted", naming X) and an Abort to the scheduler, since each one passes through every
  // actor and X held part of it (a /tokenize call too when X is the tokenizer); healthy() is false
  // until "up X". Returns how many requests it ended.
  size_t on_peer_notice(const runtime::PeerNotice& notice);

 private:
  struct Pending {
    gateway::DeltaSink sink;
    int32_t samples = 1;
    int32_t finished = 0;
  };
  std::mutex mutex_;
  zmq::socket_t to_tokenizer_;
  zmq::socket_t to_scheduler_;
  zmq::socket_t events_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::unordered_map<uint64_t, gateway::TokenizeSink> tokenize_calls_;  // by request id, until answered
  std::set<std::string> peers_down_;  // actors the launcher reported down and not up again
  protocol::Stats stats_;
  int64_t last_stats_ns_ = 0;
};

}  // namespace zinfer::actors
