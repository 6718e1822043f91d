// An actor is a thread with its own ZeroMQ sockets and a control pipe (a PAIR socket pair over
// inproc). As with czmq's zactor: constructing an Actor starts the thread and blocks until the
// body signals ready (or throws what the body reported as its start-up failure); term() asks it to
// end ("$TERM" on the pipe, plus a flag that long handlers may poll) and joins. The destructor
// terms. The body owns every socket it creates; nothing else touches them.
//
// The pipe also carries supervision (docs/architecture.md, I38): heartbeat() asks the actor's
// loop to answer "$PING" (a loop that turns answers at once, a hung one never), and notify() hands
// the loop a notice about another actor ("down NAME", "up NAME"), which the body handles with
// Loop::on_notice.
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
#include <vector>

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
  // Notices that arrived while no loop with a notice handler was running (e.g. during a nested
  // wait): kept, at most kMaxHeldNotices (the oldest go first), for the next loop that has one.
  void hold_notice(std::string notice);
  std::vector<std::string> take_held_notices();
  bool has_held_notices() const { return !held_notices_.empty(); }
  static constexpr size_t kMaxHeldNotices = 256;

 private:
  zmq::socket_t socket_;
  std::shared_ptr<std::atomic<bool>> term_flag_;
  std::string name_;
  bool ready_signalled_ = false;
  std::vector<std::string> held_notices_;
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
  // Why the body stopped, when it ended by an exception after it was ready ("" otherwise).
  std::string failure() const;

  // Liveness: true while the actor's loop answered the previous heartbeat (the first call is
  // true), then asks again. Call it at the heartbeat interval from one thread; a loop blocked in
  // a handler answers once the handler returns. Only one question is outstanding at a time.
  bool heartbeat();
  // What the last heartbeat() returned.
  bool answered() const { return answered_; }
  // Hands the actor's loop a notice (Loop::on_notice); never blocks.
  void notify(const std::string& notice);

 private:
  std::string name_;
  zmq::socket_t pipe_;
  std::shared_ptr<std::atomic<bool>> term_flag_;
  std::shared_ptr<std::atomic<bool>> alive_;
  std::shared_ptr<std::string> failure_;  // written by the thread before alive_ turns false
  std::thread thread_;
  bool termed_ = false;
  bool ping_outstanding_ = false;
  bool answered_ = true;
};

inline constexpr const char* kTermCommand = "$TERM";
inline constexpr const char* kPingCommand = "$PING";
inline constexpr const char* kPongReply = "$PONG";
inline constexpr const char* kNoticePrefix = "$NOTICE:";

}  // namespace zinfer::runtime
