// The control channel between `zinfer launch` and one actor process: one end of a
// socketpair(AF_UNIX, SOCK_SEQPACKET), so every send is one whole message. The actor process
// sends a heartbeat while its actor's loop turns (Actor::heartbeat); the launcher sends it
// notices about the other actors (runtime/peer_notice.h). Neither side ever blocks on it: a
// message that does not fit is dropped by send() (a heartbeat is repeated anyway; a notice that
// cannot be delivered means the peer is stuck, and the launcher treats that by its heartbeats).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace zinfer::runtime {

class ControlChannel {
 public:
  // Takes ownership of `fd` (closed by the destructor); -1 is an unconnected channel.
  explicit ControlChannel(int fd = -1) : fd_(fd) {}
  ~ControlChannel();
  ControlChannel(ControlChannel&& o) noexcept : fd_(std::exchange(o.fd_, -1)), closed_(o.closed_) {}
  ControlChannel& operator=(ControlChannel&& o) noexcept;
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  // Both ends of a new channel (close-on-exec; the launcher hands one to a child).
  static std::pair<ControlChannel, ControlChannel> make_pair();

  int fd() const { return fd_; }
  // False when the message could not be sent now (peer gone, or its queue full).
  bool send(std::string_view message);
  // One message if one is waiting, else nullopt; never blocks. Marks the channel closed once the
  // peer has closed its end.
  std::optional<std::string> recv();
  bool closed() const { return closed_ || fd_ < 0; }
  // Waits until a message may be readable (or the peer closed), up to `timeout_ms`.
  bool wait_readable(int timeout_ms) const;
  // Gives the descriptor up (the caller owns it now).
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
  bool closed_ = false;
};

}  // namespace zinfer::runtime
