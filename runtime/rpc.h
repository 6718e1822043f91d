// Request/reply between actors for fibers: RpcClient (a DEALER) lets any number of fibers of one
// Loop each wait for their own reply; RpcServer (a ROUTER) hands each request to a handler that
// may answer at once or later. Frames: client sends [correlation id (8 bytes)][payload]; the
// server sees [identity][correlation id][payload] and answers with the same first two frames.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/fiber/future.hpp>
#include <zmq.hpp>

#include "runtime/loop.h"

namespace zinfer::runtime {

class RpcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RpcClient {
 public:
  RpcClient(Loop& loop, const std::string& endpoint);
  ~RpcClient();  // wakes every waiting fiber with RpcError
  // Sends a request and blocks the calling fiber (not the thread) until its reply arrives.
  // Must be called from a fiber of `loop`'s thread (Loop::spawn), not from a handler.
  std::string call(std::string_view request);
  size_t in_flight() const { return pending_.size(); }

 private:
  void on_readable(zmq::socket_t& s);
  Loop& loop_;
  zmq::socket_t socket_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, boost::fibers::promise<std::string>> pending_;
};

// One request received by an RpcServer; reply() may be called once, now or later.
class RpcRequest {
 public:
  RpcRequest(zmq::socket_t* socket, std::string identity, std::string correlation, std::string payload)
      : socket_(socket), identity_(std::move(identity)), correlation_(std::move(correlation)),
        payload_(std::move(payload)) {}
  const std::string& payload() const { return payload_; }
  void reply(std::string_view payload);

 private:
  zmq::socket_t* socket_;
  std::string identity_;
  std::string correlation_;
  std::string payload_;
  bool replied_ = false;
};

class RpcServer {
 public:
  using Handler = std::function<void(std::shared_ptr<RpcRequest>)>;
  RpcServer(Loop& loop, const std::string& endpoint, Handler handler);
  ~RpcServer();

 private:
  Loop& loop_;
  zmq::socket_t socket_;
  Handler handler_;
};

}  // namespace zinfer::runtime
