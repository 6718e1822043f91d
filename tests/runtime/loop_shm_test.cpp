// The Loop watching shm rings (runtime/loop.h) through the actors' Link (runtime/link.h): an
// actor that serves requests on a shm:// link, sockets next to rings, Term while the loop sleeps
// on a ring, and a ring that never runs dry not starving the sockets.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "runtime/actor.h"
#include "runtime/context.h"
#include "runtime/link.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"
#include "runtime/shm_link.h"
#include "tests/runtime/shm_test_util.h"

namespace zinfer::runtime {
namespace {

using namespace std::chrono_literals;
using test::TempFolder;

// An actor that answers every message on a kServer link with the message and "!" appended.
ActorBody shm_echo(std::string endpoint) {
  return [endpoint](Pipe& pipe) {
    LinkOptions options;
    options.should_stop = [&pipe] { return pipe.term_requested(); };
    auto link = open_link(Link::Role::kServer, endpoint, options);
    Loop loop(&pipe);
    link->watch(loop, [](Link& l) {
      while (auto m = l.recv()) l.send(*m + "!");
    });
    pipe.signal_ready();
    loop.run();
  };
}

// Invariant 11 (docs/architecture.md): the same actor code runs over every transport.
TEST(LoopShm, AnActorServesAShmLinkAndTermEndsItWhileItSleeps) {
  TempFolder dir;
  const std::string endpoint = dir.endpoint("echo");
  Actor echo("shm-echo", shm_echo(endpoint));
  auto client = open_link(Link::Role::kClient, endpoint);
  Loop loop;
  int received = 0;
  std::string last;
  client->watch(loop, [&](Link& l) {
    while (auto m = l.recv()) {
      ++received;
      last = *m;
    }
  });
  for (int i = 0; i < 2000; ++i) {
    client->send(std::to_string(i));
    // Every tenth round let the echo actor fall asleep first: the eventcount's path.
    if (i % 10 == 0) std::this_thread::sleep_for(200us);
    while (received <= i) ASSERT_TRUE(loop.run_once(5000ms));
    ASSERT_EQ(last, std::to_string(i) + "!");
  }
  std::this_thread::sleep_for(20ms);  // the actor's loop is asleep on its ring now
  echo.term();
  EXPECT_FALSE(echo.alive());
}

TEST(LoopShm, SocketsAndRingsOfOneLoopBothGetTheirHandlersCalled) {
  TempFolder dir;
  auto ring_in = open_link(Link::Role::kPull, dir.endpoint("pull"));
  auto ring_out = open_link(Link::Role::kPush, dir.endpoint("pull"));
  zmq::socket_t pull(zmq_context(), zmq::socket_type::pull);
  pull.bind("inproc://loop-shm-test-pull");
  zmq::socket_t push(zmq_context(), zmq::socket_type::push);
  push.connect("inproc://loop-shm-test-pull");

  Loop loop;
  int from_ring = 0, from_socket = 0;
  ring_in->watch(loop, [&](Link& l) {
    // One message per call, so that the ring stays non-empty for many turns.
    if (l.recv()) ++from_ring;
  });
  loop.on(pull, [&](zmq::socket_t& s) {
    while (recv_frame(s, true)) ++from_socket;
  });
  for (int i = 0; i < 100; ++i) ring_out->send("r");
  push.send(zmq::str_buffer("s"), zmq::send_flags::none);
  // The ring is never empty before from_ring reaches 100; the socket must still be served.
  while (from_socket == 0) ASSERT_TRUE(loop.run_once(1000ms));
  EXPECT_LT(from_ring, 100) << "the socket waited for the ring to run dry";
  while (from_ring < 100) ASSERT_TRUE(loop.run_once(1000ms));
  EXPECT_EQ(from_ring, 100);
  // Nothing left: a turn with a short wait returns without calling either handler.
  loop.run_once(10ms);
  EXPECT_EQ(from_ring, 100);
  EXPECT_EQ(from_socket, 1);
}

TEST(LoopShm, ABlockedLoopWakesForARingMessage) {
  TempFolder dir;
  auto in = open_link(Link::Role::kPull, dir.endpoint("wake"));
  std::atomic<bool> got{false};
  std::thread reader([&] {
    Loop loop;
    loop.set_spin(0us);  // always sleep: every message must come through the wake fd
    in->watch(loop, [&](Link& l) {
      if (l.recv()) got = true;
    });
    while (!got) loop.run_once(20000ms);
  });
  auto out = open_link(Link::Role::kPush, dir.endpoint("wake"));
  std::this_thread::sleep_for(20ms);  // the reader is asleep in poll() by now
  out->send("wake up");
  reader.join();  // without the wake-up this would take the full 20 s poll
  EXPECT_TRUE(got.load());
}

// Invariant 10 (docs/architecture.md): each actor binds its own endpoint; start order only matters for readiness.
TEST(LoopShm, AShmConnectorWaitsForItsBinderAndTermEndsTheWait) {
  TempFolder dir;
  // A scheduler-like actor that connects to a shm endpoint nobody binds: Term must end it.
  {
    Actor waiting("waits-for-binder", [endpoint = dir.endpoint("nobody")](Pipe& pipe) {
      pipe.signal_ready();  // ready first, so that the constructor returns and we can Term
      LinkOptions options;
      options.should_stop = [&pipe] { return pipe.term_requested(); };
      try {
        auto link = open_link(Link::Role::kClient, endpoint, options);
      } catch (const ShmRingStopped&) {
        return;
      }
    });
    std::this_thread::sleep_for(20ms);
    waiting.term();
    EXPECT_FALSE(waiting.alive());
  }
}

}  // namespace
}  // namespace zinfer::runtime
