#include "runtime/loop.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>

#include <boost/fiber/all.hpp>

#include "runtime/actor.h"
#include "runtime/logging.h"
#include "runtime/shm_ring.h"

namespace zinfer::runtime {

namespace {

// Fibers of a loop's thread are scheduled round robin; the loop itself is the thread's main fiber.
void install_fiber_scheduling() {
  thread_local bool installed = false;
  if (!installed) {
    boost::fibers::use_scheduling_algorithm<boost::fibers::algo::round_robin>();
    installed = true;
  }
}

}  // namespace

Loop::Loop(Pipe* pipe) : pipe_(pipe) {
  install_fiber_scheduling();
  if (pipe_ != nullptr) {
    on(pipe_->socket(), [this](zmq::socket_t& s) {
      zmq::message_t msg;
      while (s.recv(msg, zmq::recv_flags::dontwait)) {
        const std::string_view text = msg.to_string_view();
        if (text == kTermCommand) {
          stopped_ = true;
        } else if (text == kPingCommand) {
          // The heartbeat (Actor::heartbeat): this loop turns.
          try {
            s.send(zmq::buffer(std::string_view(kPongReply)), zmq::send_flags::dontwait);
          } catch (const zmq::error_t&) {
          }
        } else if (text.rfind(kNoticePrefix, 0) == 0) {
          std::string notice(text.substr(std::char_traits<char>::length(kNoticePrefix)));
          if (notice_handler_) {
            notice_handler_(notice);
          } else {
            pipe_->hold_notice(std::move(notice));
          }
        }
      }
    });
  }
}

void Loop::on_notice(NoticeHandler handler) { notice_handler_ = std::move(handler); }

Loop::~Loop() {
  // Let fibers woken during shutdown (e.g. by an RpcClient's destructor) run to their end.
  run_ready_fibers();
}

void Loop::on(zmq::socket_t& socket, SocketHandler handler) {
  for (size_t i = 0; i < sockets_.size(); ++i) {
    if (sockets_[i] == &socket) {
      handlers_[i] = std::move(handler);
      return;
    }
  }
  sockets_.push_back(&socket);
  handlers_.push_back(std::move(handler));
}

void Loop::remove(zmq::socket_t& socket) {
  for (size_t i = 0; i < sockets_.size(); ++i) {
    if (sockets_[i] == &socket) {
      sockets_.erase(sockets_.begin() + static_cast<long>(i));
      handlers_.erase(handlers_.begin() + static_cast<long>(i));
      return;
    }
  }
}

void Loop::on(ShmRingReader& reader, ShmHandler handler) {
  for (size_t i = 0; i < rings_.size(); ++i) {
    if (rings_[i] == &reader) {
      ring_handlers_[i] = std::move(handler);
      return;
    }
  }
  rings_.push_back(&reader);
  ring_handlers_.push_back(std::move(handler));
}

void Loop::remove(ShmRingReader& reader) {
  for (size_t i = 0; i < rings_.size(); ++i) {
    if (rings_[i] == &reader) {
      rings_.erase(rings_.begin() + static_cast<long>(i));
      ring_handlers_.erase(ring_handlers_.begin() + static_cast<long>(i));
      return;
    }
  }
}

bool Loop::any_ring_has_data() const {
  for (const ShmRingReader* r : rings_) {
    if (r->has_data()) return true;
  }
  return false;
}

int Loop::block(std::vector<zmq::pollitem_t>& items, std::chrono::milliseconds timeout) {
  // The eventcount: publish "asleep" in every ring, then block unless one got data meanwhile.
  size_t armed = 0;
  bool data = false;
  for (; armed < rings_.size(); ++armed) {
    if (!rings_[armed]->prepare_sleep()) {
      data = true;
      break;
    }
  }
  int ready = 0;
  try {
    ready = zmq::poll(items.data(), items.size(), data ? std::chrono::milliseconds(0) : timeout);
  } catch (...) {
    for (size_t i = 0; i < armed; ++i) rings_[i]->after_sleep();
    throw;
  }
  const size_t first_ring = items.size() - rings_.size();
  for (size_t i = 0; i < armed; ++i) rings_[i]->after_sleep((items[first_ring + i].revents & ZMQ_POLLIN) != 0);
  return ready;
}

int Loop::dispatch_rings() {
  int n = 0;
  // Copy the list: a handler may add or remove rings.
  std::vector<ShmRingReader*> rings = rings_;
  for (ShmRingReader* r : rings) {
    if (stopped_) break;
    auto pos = std::find(rings_.begin(), rings_.end(), r);
    if (pos == rings_.end() || !r->has_data()) continue;
    ShmHandler h = ring_handlers_[static_cast<size_t>(pos - rings_.begin())];
    h(*r);
    ++n;
  }
  return n;
}

int64_t Loop::after(std::chrono::microseconds delay, TimerHandler handler) {
  int64_t id = next_timer_id_++;
  timers_[id] = Timer{Clock::now() + delay, std::chrono::microseconds(0), std::move(handler)};
  return id;
}

int64_t Loop::every(std::chrono::microseconds period, TimerHandler handler) {
  int64_t id = next_timer_id_++;
  timers_[id] = Timer{Clock::now() + period, period, std::move(handler)};
  return id;
}

void Loop::cancel(int64_t timer_id) { timers_.erase(timer_id); }

void Loop::spawn(std::function<void()> fn) {
  ++live_fibers_;
  boost::fibers::fiber([this, fn = std::move(fn)] {
    try {
      fn();
    } catch (const std::exception& e) {
      logger("runtime")->error("fiber ended by an exception: {}", e.what());
    }
    --live_fibers_;
  }).detach();
}

void Loop::run_ready_fibers() {
  // One yield lets every fiber that is ready now run until it blocks or ends; the main fiber
  // (this loop) resumes after them.
  if (live_fibers_ > 0) boost::this_fiber::yield();
}

void Loop::fire_due_timers() {
  auto now = Clock::now();
  std::vector<int64_t> due;
  for (auto& [id, t] : timers_) {
    if (t.due <= now) due.push_back(id);
  }
  for (int64_t id : due) {
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;  // cancelled by an earlier handler
    TimerHandler h = it->second.handler;
    if (it->second.period.count() > 0) {
      it->second.due = now + it->second.period;
    } else {
      timers_.erase(it);
    }
    h();
  }
}

bool Loop::run_once(std::chrono::milliseconds max_wait) {
  if (stopped_) return false;
  // Notices held while no loop with a handler ran (a nested wait on the same pipe).
  if (notice_handler_ && pipe_ != nullptr && pipe_->has_held_notices()) {
    for (auto& notice : pipe_->take_held_notices()) notice_handler_(notice);
  }
  run_ready_fibers();
  if (stopped_) return false;

  auto timeout = max_wait;
  if (!timers_.empty()) {
    auto next = std::min_element(timers_.begin(), timers_.end(), [](auto& a, auto& b) {
                  return a.second.due < b.second.due;
                })->second.due;
    auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
    // Round up so that we do not spin on a timer that is due in under a millisecond.
    if (until.count() < 0) until = std::chrono::milliseconds(0);
    timeout = std::min(timeout, until);
  }
  // A fiber may have been woken by another fiber during the yield: while fibers live, poll
  // again within a millisecond so that such a fiber never waits long.
  if (live_fibers_ > 0) timeout = std::min(timeout, std::chrono::milliseconds(1));

  // Sockets first, then the wake fds of the rings (raw fd items).
  std::vector<zmq::pollitem_t> items(sockets_.size() + rings_.size());
  for (size_t i = 0; i < sockets_.size(); ++i) {
    items[i] = zmq::pollitem_t{sockets_[i]->handle(), 0, ZMQ_POLLIN, 0};
  }
  for (size_t i = 0; i < rings_.size(); ++i) {
    items[sockets_.size() + i] = zmq::pollitem_t{nullptr, rings_[i]->wake_fd(), ZMQ_POLLIN, 0};
  }
  const size_t num_sockets = sockets_.size();
  bool rings_ready = any_ring_has_data();
  try {
    // Spin, then block: right after a turn that had work, poll without sleeping for up to
    // spin_ before blocking. A thread that sleeps in epoll needs tens of microseconds to be
    // woken on an idle core (the scheduler and the core's power state), which would be most of
    // an inproc round trip; a loop that has just been busy is likely to get its next message soon.
    int ready = 0;
    if (!rings_ready && had_work_ && spin_.count() > 0 && timeout.count() > 0) {
      auto until = Clock::now() + spin_;
      // Yield between polls: where the cores are oversubscribed the peer we wait for may need
      // this very core, and a plain spin would hold it off for the whole spin. The rings cost
      // one load each, so they are checked every round; the sockets (a system call) every
      // other round when there are rings to watch.
      for (unsigned round = 0;; ++round) {
        if (any_ring_has_data()) {
          rings_ready = true;
          break;
        }
        if (rings_.empty() || round % 2 == 0) {
          ready = zmq::poll(items.data(), num_sockets, std::chrono::milliseconds(0));
          if (ready != 0) break;
        }
        if (Clock::now() >= until) break;
        std::this_thread::yield();
      }
    }
    if (ready == 0 && !rings_ready) {
      if (rings_.empty()) {
        ready = zmq::poll(items.data(), items.size(), timeout);
      } else {
        block(items, timeout);
        ready = 0;
        for (size_t i = 0; i < num_sockets; ++i) ready += (items[i].revents & ZMQ_POLLIN) != 0;
        rings_ready = any_ring_has_data();
      }
    }
    // Rings with data skipped the poll: look at the sockets too, every fourth such turn (a
    // system call each time), so that a ring that never runs dry cannot starve them ($TERM).
    if (rings_ready && ready == 0 && num_sockets > 0 && (++ring_turns_ & 3) == 0) {
      ready = zmq::poll(items.data(), num_sockets, std::chrono::milliseconds(0));
    }
    had_work_ = ready > 0 || rings_ready;
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return !stopped_;
    throw;
  }
  // Copy the socket list: a handler may add or remove sockets.
  std::vector<zmq::socket_t*> polled = sockets_;
  for (size_t i = 0; i < num_sockets && !stopped_; ++i) {
    if ((items[i].revents & ZMQ_POLLIN) == 0) continue;
    auto pos = std::find(sockets_.begin(), sockets_.end(), polled[i]);
    if (pos == sockets_.end()) continue;
    SocketHandler h = handlers_[static_cast<size_t>(pos - sockets_.begin())];
    h(*polled[i]);
  }
  if (rings_ready && !stopped_) dispatch_rings();
  if (!stopped_) fire_due_timers();
  return !stopped_;
}

void Loop::run() {
  while (run_once(std::chrono::milliseconds(1000))) {
  }
}

}  // namespace zinfer::runtime
