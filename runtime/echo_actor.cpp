#include "runtime/echo_actor.h"

#include "protocol/envelope.h"
#include "runtime/context.h"
#include "runtime/logging.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"

namespace zinfer::runtime {

ActorBody echo_actor(std::string endpoint, std::shared_ptr<EchoCounters> counters) {
  return [endpoint, counters](Pipe& pipe) {
    zmq::socket_t router(zmq_context(), zmq::socket_type::router);
    configure_pipeline_socket(router);
    router.bind(endpoint);
    Loop loop(&pipe);
    loop.on(router, [&](zmq::socket_t& s) {
      for (int i = 0; i < 256; ++i) {
        zmq::message_t identity;
        if (!s.recv(identity, zmq::recv_flags::dontwait)) return;
        if (!identity.more()) continue;
        auto body = recv_frame(s, false);
        if (!body) continue;
        std::string id = identity.to_string();
        try {
          protocol::Frame f = protocol::open(*body);
          if (counters && (f.type() == protocol::MessageType::kPing || f.type() == protocol::MessageType::kBenchPayload)) {
            counters->served++;  // counted before the reply leaves, so a client that saw it sees the count
          }
          if (f.type() == protocol::MessageType::kPing) {
            auto ping = f.as<protocol::Ping>();
            send_routed(s, id, protocol::Pong{ping.seq, ping.sent_ns});
          } else if (f.type() == protocol::MessageType::kBenchPayload) {
            // Echo the bytes as they came: the benchmark measures transport, not re-encoding.
            s.send(zmq::buffer(id), zmq::send_flags::sndmore);
            s.send(zmq::buffer(*body), zmq::send_flags::none);
          } else {
            throw protocol::ProtocolError(protocol::DecodeErrorKind::kUnexpectedType,
                                          std::string("echo actor does not serve ") + protocol::to_string(f.type()));
          }
        } catch (const protocol::ProtocolError& e) {
          if (counters) counters->bad_frames++;  // before the reply, as above
          logger(pipe.name())->debug("bad frame: {}", e.what());
          send_routed(s, id, protocol::error_reply_for(e));
        }
      }
    });
    pipe.signal_ready();
    loop.run();
  };
}

ActorBody sink_actor(std::string endpoint, std::shared_ptr<std::atomic<uint64_t>> received) {
  return [endpoint, received](Pipe& pipe) {
    zmq::socket_t pull(zmq_context(), zmq::socket_type::pull);
    configure_pipeline_socket(pull);
    pull.bind(endpoint);
    Loop loop(&pipe);
    loop.on(pull, [&](zmq::socket_t& s) {
      zmq::message_t msg;
      uint64_t n = 0;
      while (n < 4096 && s.recv(msg, zmq::recv_flags::dontwait)) ++n;
      received->fetch_add(n, std::memory_order_relaxed);
    });
    pipe.signal_ready();
    loop.run();
  };
}

}  // namespace zinfer::runtime
