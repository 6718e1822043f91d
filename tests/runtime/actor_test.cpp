// The actor contract: start blocks until ready, a failed start throws, Term always ends it.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "runtime/actor.h"
#include "runtime/context.h"
#include "runtime/loop.h"

namespace zinfer::runtime {
namespace {

using namespace std::chrono_literals;

// Invariant 1 (docs/architecture.md): actors share no memory; they exchange only messages.
TEST(Actor, StartBlocksUntilReadyAndTermEnds) {
  std::atomic<bool> ready_done{false};
  std::atomic<bool> ended{false};
  {
    Actor a("slow-start", [&](Pipe& pipe) {
      std::this_thread::sleep_for(100ms);  // start-up work the caller must wait for
      ready_done = true;
      Loop loop(&pipe);
      pipe.signal_ready();
      loop.run();
      ended = true;
    });
    EXPECT_TRUE(ready_done.load());  // the constructor returned only after ready
    EXPECT_TRUE(a.alive());
    a.term();
    EXPECT_TRUE(ended.load());
    EXPECT_FALSE(a.alive());
    a.term();  // idempotent
  }
}

TEST(Actor, FailedStartThrowsWithTheReason) {
  try {
    Actor a("broken", [](Pipe&) { throw std::runtime_error("cannot bind tcp://bad"); });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot bind tcp://bad"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
  }
  try {
    Actor a("silent", [](Pipe&) {});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("before signalling ready"), std::string::npos) << e.what();
  }
}

TEST(Actor, TermDuringABusyHandler) {
  std::atomic<bool> in_handler{false};
  std::atomic<int> handler_runs{0};
  Actor a("busy", [&](Pipe& pipe) {
    zmq::socket_t pull(zmq_context(), zmq::socket_type::pull);
    pull.bind("inproc://busy-test");
    Loop loop(&pipe);
    loop.on(pull, [&](zmq::socket_t& s) {
      zmq::message_t m;
      (void)s.recv(m, zmq::recv_flags::dontwait);
      in_handler = true;
      handler_runs++;
      // A long handler that watches for Term, as long handlers must.
      auto until = std::chrono::steady_clock::now() + 30s;
      while (!pipe.term_requested() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    });
    pipe.signal_ready();
    loop.run();
  });
  zmq::socket_t push(zmq_context(), zmq::socket_type::push);
  push.connect("inproc://busy-test");
  push.send(zmq::str_buffer("work"), zmq::send_flags::none);
  push.send(zmq::str_buffer("more work"), zmq::send_flags::none);
  while (!in_handler) std::this_thread::sleep_for(1ms);
  auto t0 = std::chrono::steady_clock::now();
  a.term();
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, 5s);
  EXPECT_FALSE(a.alive());
  EXPECT_EQ(handler_runs.load(), 1);  // the loop stopped before the queued message
  push.set(zmq::sockopt::linger, 0);
}

TEST(Loop, TimersFireInOrderAndRepeat) {
  Loop loop;
  std::vector<int> order;
  int ticks = 0;
  loop.after(20ms, [&] { order.push_back(2); });
  loop.after(5ms, [&] { order.push_back(1); });
  int64_t rep = loop.every(2ms, [&] { ++ticks; });
  loop.after(40ms, [&] { loop.stop(); });
  loop.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_GE(ticks, 5);
  loop.cancel(rep);
}

}  // namespace
}  // namespace zinfer::runtime
