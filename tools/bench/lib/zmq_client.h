// The zinfer-zmq backend: zinfer's native client endpoint (a ZeroMQ ROUTER at the gateway). The
// client is one DEALER socket; each request is one frame, the protocol envelope around a
// GenerateRequest (protocol/envelope.h) whose request_id the client chooses; the answers are
// TextDelta frames (text, the running completion_tokens, finish_reason on the last) or an
// ErrorReply naming the request. One I/O thread owns the socket; submit() hands it work through
// an inproc pipe so that a request is sent without polling delays.
#pragma once

#include <memory>
#include <string>

#include "tools/bench/lib/backend.h"

namespace zinfer::bench {

class ZmqBackend : public Backend {
 public:
  // endpoint: a ZeroMQ address such as tcp://127.0.0.1:5555.
  explicit ZmqBackend(const std::string& endpoint);
  ~ZmqBackend() override;
  void submit(BackendRequest request, Completion done) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zinfer::bench
