// An actor's link to one peer, carrying whole messages, over whichever transport its endpoint
// names: ZeroMQ for inproc://, ipc:// and tcp://, a shared-memory ring pair for shm://
// (runtime/shm_link.h, one process on each side, one sender per direction). The actors write
// their message handling once against this interface; the config chooses the transport.
//
//   role     binds?  sends                               receives   ZeroMQ socket
//   kPull    yes     -                                   yes        PULL
//   kPush    no      yes                                 -          PUSH
//   kServer  yes     to the sender of the last message   yes        ROUTER
//   kClient  no      yes                                 yes        DEALER
//
// kServer answers "the sender of the message last received": a server that answers each request
// before reading the next (the executor) needs no identities in its code. Over shm:// a link has
// exactly one peer, so a second process that connects to a bound shm endpoint takes the first's
// place in the rings: shm:// is for links the config gives exactly one sender per direction.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace zinfer::runtime {

class Loop;

class Link {
 public:
  enum class Role { kPull, kPush, kServer, kClient };

  virtual ~Link() = default;
  // Sends one message; waits while the peer's queue is full (back-pressure, never loss).
  virtual void send(std::string_view message) = 0;
  // One message if a whole one is waiting, else nullopt; never blocks.
  virtual std::optional<std::string> recv() = 0;
  // Calls `on_readable` from `loop` when messages may be waiting; it should drain them with recv().
  virtual void watch(Loop& loop, std::function<void(Link&)> on_readable) = 0;
  virtual void unwatch(Loop& loop) = 0;
  const std::string& endpoint() const { return endpoint_; }

 protected:
  explicit Link(std::string endpoint) : endpoint_(std::move(endpoint)) {}

 private:
  std::string endpoint_;
};

struct LinkOptions {
  int zmq_hwm = 100000;                     // ZeroMQ high-water marks (messages)
  size_t shm_ring_bytes = size_t(1) << 20;  // shm:// ring per direction (the binder decides)
  // Ends a wait with an exception: a shm:// connector waiting for its binder, a sender waiting
  // for room in a full ring. An actor passes its Term (Pipe::term_requested).
  std::function<bool()> should_stop;
};

// Binds (kPull, kServer) or connects (kPush, kClient) `endpoint`. Throws std::runtime_error (or
// zmq::error_t) naming what failed; a shm:// connector waits for its binder (see LinkOptions).
std::unique_ptr<Link> open_link(Link::Role role, const std::string& endpoint, const LinkOptions& options = {});

}  // namespace zinfer::runtime
