// An actor is a thread with its own ZeroMQ sockets and a control pipe (a PAIR socket pair over
// inproc). As with czmq's zactor: constructing an Actor starts the thread and blocks until the
// body signals ready (or throws what the body reported as its start-up failure); term() asks it to
// end ("$TERM" on the pipe, plus a flag that long handlers may poll) and joins. The destructor
// terms. The body owns every socket it creates; nothing else touches them.
//
//   Actor echo("echo", [](Pipe& pipe) {
//     zmq::socket_t s(zmq_context(), zmq::socket_type::rep);
//     s.bind("inproc://echo");
//     Loop loop(&pipe);            // $TERM on the pipe ends loop.run()
//     loop.on(s, [&](zmq::socket_t& s) { ... });
//     pipe.signal_ready();
//     loop.run();
//   });
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <zmq.hpp>

namespace zinfer::runtime {

// The actor's end of its control pipe.
class Pipe {
 public:
  Pipe(zmq::socket_t socket, std::shared_ptr<std::atomic<bool>> term_flag, std::string name);
  zmq::socket_t& socket() { return socket_; }
  const std::string& name() const { return name_; }
  void signal_ready();
  void signal_failed(const std::string& why);
  // True once term() was called: a handler that runs long checks this and returns early.
  bool term_requested() const { return term_flag_->load(std::memory_order_relaxed); }
  bool ready_signalled() const { return ready_signalled_; }

 private:
  zmq::socket_t socket_;
  std::shared_ptr<std::atomic<bool>> term_flag_;
  std::string name_;
  bool ready_signalled_ = false;
};

using ActorBody = std::function<void(Pipe&)>;

class Actor {
 public:
  Actor(std::string name, ActorBody body);
  ~Actor();
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;

  void term();
  const std::string& name() const { return name_; }
  // False once the body returned (normally after term(), or because it failed).
  bool alive() const { return alive_->load(); }

 private:
  std::string name_;
  zmq::socket_t pipe_;
  std::shared_ptr<std::atomic<bool>> term_flag_;
  std::shared_ptr<std::atomic<bool>> alive_;
  std::thread thread_;
  bool termed_ = false;
};

inline constexpr const char* kTermCommand = "$TERM";

}  // namespace zinfer::runtime
