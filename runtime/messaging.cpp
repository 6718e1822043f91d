#include "runtime/messaging.h"

namespace zinfer::runtime {

std::optional<std::string> recv_frame(zmq::socket_t& socket, bool dontwait) {
  zmq::message_t msg;
  if (!socket.recv(msg, dontwait ? zmq::recv_flags::dontwait : zmq::recv_flags::none)) return std::nullopt;
  std::string out = msg.to_string();
  while (msg.more()) {
    zmq::message_t extra;
    (void)socket.recv(extra, zmq::recv_flags::none);
    msg = std::move(extra);
  }
  return out;
}

void configure_pipeline_socket(zmq::socket_t& socket, int hwm) {
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::sndhwm, hwm);
  socket.set(zmq::sockopt::rcvhwm, hwm);
}

}  // namespace zinfer::runtime
