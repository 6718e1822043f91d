// One actor keeps 1,000 requests in flight at once, each in its own fiber waiting for its reply,
// while the actor's loop goes on serving.
#include <gtest/gtest.h>

#include "runtime/actor.h"
#include "runtime/context.h"
#include "runtime/loop.h"
#include "runtime/rpc.h"

namespace zinfer::runtime {
namespace {

TEST(FiberRpc, ThousandFibersWithRepliesInFlight) {
  constexpr int kFibers = 1000;
  std::atomic<int> max_held{0};
  // The server holds every request until all 1,000 have arrived, then answers them in reverse
  // order: the client can only finish if all of them were in flight together.
  Actor server("holder", [&](Pipe& pipe) {
    Loop loop(&pipe);
    std::vector<std::shared_ptr<RpcRequest>> held;
    RpcServer rpc(loop, "inproc://fiber-holder", [&](std::shared_ptr<RpcRequest> r) {
      held.push_back(std::move(r));
      max_held = static_cast<int>(held.size());
      if (static_cast<int>(held.size()) == kFibers) {
        for (auto it = held.rbegin(); it != held.rend(); ++it) (*it)->reply("re:" + (*it)->payload());
        held.clear();
      }
    });
    pipe.signal_ready();
    loop.run();
  });

  std::atomic<int> correct{0};
  std::atomic<int> loop_turns_while_waiting{0};
  std::atomic<bool> done{false};
  Actor client("caller", [&](Pipe& pipe) {
    Loop loop(&pipe);
    RpcClient rpc(loop, "inproc://fiber-holder");
    int finished = 0;
    for (int i = 0; i < kFibers; ++i) {
      loop.spawn([&, i] {
        std::string reply = rpc.call("req" + std::to_string(i));
        if (reply == "re:req" + std::to_string(i)) correct++;
        if (++finished == kFibers) done = true;
      });
    }
    // The loop keeps running timers while the fibers wait.
    loop.every(std::chrono::milliseconds(1), [&] {
      if (!done) loop_turns_while_waiting++;
    });
    pipe.signal_ready();
    loop.run();
  });
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(done.load());
  EXPECT_EQ(correct.load(), kFibers);
  EXPECT_EQ(max_held.load(), kFibers);
  EXPECT_GT(loop_turns_while_waiting.load(), 0);
}

}  // namespace
}  // namespace zinfer::runtime
