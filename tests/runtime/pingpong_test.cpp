// The same two-actor ping-pong over inproc (two threads) and over ipc (two processes), and an
// actor that answers a malformed frame with an error and keeps serving.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "protocol/envelope.h"
#include "runtime/actor.h"
#include "runtime/context.h"
#include "runtime/echo_actor.h"
#include "runtime/loop.h"
#include "runtime/messaging.h"

extern char** environ;

namespace zinfer::runtime {
namespace {

// A DEALER that sends `rounds` Pings and checks each Pong.
int ping_rounds(const std::string& endpoint, int rounds) {
  zmq::socket_t dealer(zmq_context(), zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 10000);
  dealer.connect(endpoint);
  int ok = 0;
  for (int i = 0; i < rounds; ++i) {
    send_message(dealer, protocol::Ping{static_cast<uint64_t>(i), 0});
    auto reply = recv_frame(dealer, false);
    if (!reply) break;
    auto pong = protocol::decode<protocol::Pong>(*reply);
    if (pong.seq == static_cast<uint64_t>(i)) ++ok;
  }
  return ok;
}

// Invariant 1 (docs/architecture.md): actors share no memory; they exchange only messages.
// Invariant 11 (docs/architecture.md): the same actor code runs over every transport.
TEST(PingPong, InprocTwoActors) {
  Actor echo("echo", echo_actor("inproc://pingpong-test"));
  int ok = 0;
  Actor pinger("pinger", [&](Pipe& pipe) {
    pipe.signal_ready();
    ok = ping_rounds("inproc://pingpong-test", 1000);
    Loop loop(&pipe);
    loop.run();
  });
  pinger.term();
  EXPECT_EQ(ok, 1000);
}

// Invariant 11 (docs/architecture.md): the same actor code runs over every transport.
TEST(PingPong, IpcTwoProcesses) {
  std::string endpoint = "ipc:///tmp/zinfer-pingpong-" + std::to_string(getpid());
  std::string peer = RUNTIME_PEER;
  std::vector<char*> argv = {peer.data(), endpoint.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, peer.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  // The peer binds asynchronously; ZeroMQ queues our pings until it is there.
  int ok = ping_rounds(endpoint, 1000);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(ok, 1000);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST(PingPong, MalformedFrameGetsAnErrorAndTheActorKeepsServing) {
  auto counters = std::make_shared<EchoCounters>();
  Actor echo("echo", echo_actor("inproc://malformed-test", counters));
  zmq::socket_t dealer(zmq_context(), zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 5000);
  dealer.connect("inproc://malformed-test");
  for (std::string bad : {std::string("\xc1\xc1"), std::string("not msgpack at all"),
                          protocol::encode(protocol::Abort{1, "wrong type for this actor"})}) {
    dealer.send(zmq::buffer(bad), zmq::send_flags::none);
    auto reply = recv_frame(dealer, false);
    ASSERT_TRUE(reply);
    auto err = protocol::decode<protocol::ErrorReply>(*reply);
    EXPECT_EQ(err.code, 400);
    EXPECT_EQ(err.kind.rfind("bad_frame:", 0), 0u) << err.kind;
  }
  send_message(dealer, protocol::Ping{42, 0});
  auto reply = recv_frame(dealer, false);
  ASSERT_TRUE(reply);
  EXPECT_EQ(protocol::decode<protocol::Pong>(*reply).seq, 42u);
  EXPECT_EQ(counters->bad_frames.load(), 3u);
  EXPECT_EQ(counters->served.load(), 1u);
}

}  // namespace
}  // namespace zinfer::runtime
