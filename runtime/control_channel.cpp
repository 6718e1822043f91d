#include "runtime/control_channel.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zinfer::runtime {

ControlChannel::~ControlChannel() {
  if (fd_ >= 0) ::close(fd_);
}

ControlChannel& ControlChannel::operator=(ControlChannel&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    closed_ = o.closed_;
  }
  return *this;
}

std::pair<ControlChannel, ControlChannel> ControlChannel::make_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::runtime_error("cannot create a control channel: " + std::string(strerror(errno)));
  }
  return {ControlChannel(fds[0]), ControlChannel(fds[1])};
}

bool ControlChannel::send(std::string_view message) {
  if (closed()) return false;
  for (;;) {
    ssize_t n = ::send(fd_, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return true;
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET) closed_ = true;
    return false;
  }
}

std::optional<std::string> ControlChannel::recv() {
  if (closed()) return std::nullopt;
  char buf[512];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) return std::string(buf, static_cast<size_t>(n));
    if (n == 0) {
      closed_ = true;  // SOCK_SEQPACKET: 0 bytes is the peer's end (we never send empty messages)
      return std::nullopt;
    }
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) closed_ = true;
    return std::nullopt;
  }
}

bool ControlChannel::wait_readable(int timeout_ms) const {
  if (closed()) return false;
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, timeout_ms);
  return r > 0;
}

}  // namespace zinfer::runtime
