// The reactor of one actor thread: poll a set of ZeroMQ sockets, shm ring readers and timers and
// call their handlers; run Boost.Fiber fibers in between, so that one actor keeps many requests in flight
// (a fiber waiting for a reply — RpcClient::call — blocks only itself, not the actor).
//
// The loop itself runs on the thread's main fiber. Each turn it first lets every ready fiber run
// until it blocks or ends, then polls (timeout 0 if a fiber became ready meanwhile, else until
// the next timer), then calls the handlers of readable sockets, of rings holding data and of due
// timers. A handler that fulfils a fiber's promise makes that fiber ready for the next turn.
//
// A shm ring reader (runtime/shm_ring.h) is watched without system calls while the loop spins
// (one atomic load of the ring's tail per round; the sockets are polled every other round) and
// through its wake fd while the loop sleeps:
// before blocking the loop publishes "asleep" in each ring (the eventcount), so that a writer
// signals the fd; a ring that got data in between keeps the loop from blocking at all. Its
// handler is called whenever the ring holds bytes, and should drain what it can. While a ring
// keeps holding data the loop skips the blocking poll, and looks at the sockets (a system call)
// every fourth such turn, so that a busy ring cannot starve them ($TERM included).
//
// Everything here is used from the loop's own thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace zinfer::runtime {

class Pipe;
class ShmRingReader;

class Loop {
 public:
  using SocketHandler = std::function<void(zmq::socket_t&)>;
  using ShmHandler = std::function<void(ShmRingReader&)>;
  using TimerHandler = std::function<void()>;
  using NoticeHandler = std::function<void(const std::string&)>;
  using Clock = std::chrono::steady_clock;

  // With a pipe, "$TERM" on it stops the loop, "$PING" is answered (the actor's heartbeat,
  // Actor::heartbeat) and a notice goes to the notice handler (or is held in the pipe for the
  // next loop that has one, when this one has none: a nested wait keeps no notice from its actor).
  explicit Loop(Pipe* pipe = nullptr);
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  void on(zmq::socket_t& socket, SocketHandler handler);
  void remove(zmq::socket_t& socket);
  // A shm ring's reader side (one loop at a time may watch a ring: the sleep flag is the ring's).
  void on(ShmRingReader& reader, ShmHandler handler);
  void remove(ShmRingReader& reader);
  // Timers: ids are positive; a repeating timer fires every `period` until cancelled.
  int64_t after(std::chrono::microseconds delay, TimerHandler handler);
  int64_t every(std::chrono::microseconds period, TimerHandler handler);
  void cancel(int64_t timer_id);
  // Notices about other actors (Actor::notify: "down NAME", "up NAME"), called on this thread;
  // those held in the pipe meanwhile are delivered at the start of the next turn.
  void on_notice(NoticeHandler handler);
  // Runs fn in a new fiber of this thread (detached; exceptions are logged, never propagated).
  void spawn(std::function<void()> fn);

  void run();   // until stop() or $TERM
  // How long the loop keeps polling without sleeping after a turn that had work (default 50 us;
  // 0 = always block at once). Trades a little CPU after activity for wake-up latency.
  void set_spin(std::chrono::microseconds spin) { spin_ = spin; }
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  // Runs one turn; returns false once stopped. For loops driven by an outer loop (tests).
  bool run_once(std::chrono::milliseconds max_wait);

 private:
  struct Timer {
    Clock::time_point due;
    std::chrono::microseconds period{0};
    TimerHandler handler;
  };
  void run_ready_fibers();
  void fire_due_timers();
  bool any_ring_has_data() const;
  // Blocks in zmq::poll up to `timeout`, the rings armed for a wake-up (returns at once if one
  // got data meanwhile); returns the number of ready sockets.
  int block(std::vector<zmq::pollitem_t>& items, std::chrono::milliseconds timeout);
  int dispatch_rings();  // calls the handlers of rings that hold data; returns how many

  Pipe* pipe_ = nullptr;
  NoticeHandler notice_handler_;
  std::vector<zmq::socket_t*> sockets_;
  std::vector<SocketHandler> handlers_;
  std::vector<ShmRingReader*> rings_;
  std::vector<ShmHandler> ring_handlers_;
  std::map<int64_t, Timer> timers_;
  int64_t next_timer_id_ = 1;
  bool stopped_ = false;
  int64_t live_fibers_ = 0;
  std::chrono::microseconds spin_{50};
  bool had_work_ = false;
  unsigned ring_turns_ = 0;
};

}  // namespace zinfer::runtime
