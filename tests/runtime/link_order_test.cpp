// Messages sent to a ZeroMQ link before its peer binds wait in the sender's queue and arrive, in
// order, once the peer is up: the start order of the actors matters only for readiness.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/link.h"

namespace zinfer::runtime {
namespace {

std::vector<std::string> receive(Link& link, size_t count) {
  std::vector<std::string> got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (got.size() < count && std::chrono::steady_clock::now() < deadline) {
    if (auto m = link.recv()) {
      got.push_back(std::move(*m));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return got;
}

// Invariant 10 (docs/architecture.md): each actor binds its own endpoint and connects to the
// others'; messages sent before the peer is up wait in the sender's queue.
TEST(LinkOrder, MessagesSentBeforeThePeerBindsArriveInOrder) {
  const std::string ipc = "ipc:///tmp/zinfer-link-order-" + std::to_string(::getpid());
  for (const std::string endpoint : {std::string("inproc://zinfer-link-order"), ipc}) {
    auto push = open_link(Link::Role::kPush, endpoint);
    for (int i = 0; i < 3; ++i) push->send("message " + std::to_string(i));
    auto pull = open_link(Link::Role::kPull, endpoint);
    EXPECT_EQ(receive(*pull, 3), (std::vector<std::string>{"message 0", "message 1", "message 2"})) << endpoint;
    EXPECT_FALSE(pull->recv().has_value()) << endpoint;
  }
  ::unlink(ipc.substr(6).c_str());
}

}  // namespace
}  // namespace zinfer::runtime
