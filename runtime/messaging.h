// Sending and receiving protocol messages (protocol/envelope.h) on ZeroMQ sockets.
// High-water marks are set on purpose: a full queue is back-pressure (send blocks, or returns
// false with dontwait), never silent loss.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "protocol/envelope.h"
#include "runtime/link.h"

namespace zinfer::runtime {

// Returns false only with dontwait when the peer's queue is full.
template <class T>
bool send_message(zmq::socket_t& socket, const T& msg, bool dontwait = false) {
  std::string bytes = protocol::encode(msg);
  auto r = socket.send(zmq::buffer(bytes), dontwait ? zmq::send_flags::dontwait : zmq::send_flags::none);
  return r.has_value();
}

// Waits while the peer's queue is full (or, on a PUSH, while no peer is there), but not past
// should_stop(): an actor stopping while its peer is already gone (the gateway stops first) must
// still hear $TERM instead of waiting in a send forever. False when it gave up.
template <class T, class ShouldStop>
bool send_message(zmq::socket_t& socket, const T& msg, const ShouldStop& should_stop) {
  std::string bytes = protocol::encode(msg);
  for (;;) {
    if (socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return true;
    if (should_stop()) return false;
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLOUT, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(10));
  }
}

// Sends one message on an actor's link (runtime/link.h); waits while the peer's queue is full.
template <class T>
void send_message(Link& link, const T& msg) {
  link.send(protocol::encode(msg));
}

// Sends [identity][message] on a ROUTER socket.
template <class T>
bool send_routed(zmq::socket_t& router, const std::string& identity, const T& msg) {
  std::string bytes = protocol::encode(msg);
  router.send(zmq::buffer(identity), zmq::send_flags::sndmore);
  return router.send(zmq::buffer(bytes), zmq::send_flags::none).has_value();
}

// Receives one single-frame message (extra frames are drained and dropped); nullopt when none is
// waiting (dontwait) .
std::optional<std::string> recv_frame(zmq::socket_t& socket, bool dontwait = true);

// Socket defaults for pipeline sockets: linger 0, the given high-water marks.
void configure_pipeline_socket(zmq::socket_t& socket, int hwm = 100000);

}  // namespace zinfer::runtime
