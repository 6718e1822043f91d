// The runtime's side of supervision: an actor's heartbeat answered by its loop (and not by a hung
// one), notices handed to the loop (also those that came during a nested wait), the reason an
// actor thread stopped, the launcher's control channel, the notices' text, the deployment lock.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "runtime/actor.h"
#include "runtime/control_channel.h"
#include "runtime/deployment_lock.h"
#include "runtime/loop.h"
#include "runtime/peer_notice.h"
#include "runtime/supervisor.h"

namespace zinfer::runtime {
namespace {

using namespace std::chrono_literals;

// Polls `heartbeat` until it is true or 2 s passed (the loop needs a turn to answer).
bool answers_within(Actor& a, std::chrono::milliseconds wait = 2000ms) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  a.heartbeat();  // asks (true: nothing was outstanding, or the last question was answered)
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
    if (a.heartbeat()) return true;
  }
  return false;
}

// Invariant 38 (docs/architecture.md): liveness is the actor's loop answering, not its thread
// existing.
TEST(Supervision, AHungLoopStopsAnsweringItsHeartbeat) {
  std::atomic<bool> hang{false};
  std::atomic<bool> hanging{false};
  Actor a("hangs", [&](Pipe& pipe) {
    Loop loop(&pipe);
    loop.every(1ms, [&] {
      while (hang.load()) {
        hanging = true;
        std::this_thread::sleep_for(1ms);
      }
      hanging = false;
    });
    pipe.signal_ready();
    loop.run();
  });
  EXPECT_TRUE(a.heartbeat());  // nothing outstanding yet
  EXPECT_TRUE(answers_within(a));
  hang = true;
  while (!hanging.load()) std::this_thread::sleep_for(1ms);
  a.heartbeat();  // the question the hung loop cannot answer (or one asked just before)
  std::this_thread::sleep_for(50ms);
  a.heartbeat();
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(a.heartbeat());
  EXPECT_FALSE(a.answered());
  EXPECT_TRUE(a.alive());  // the thread exists: that is not liveness
  hang = false;
  EXPECT_TRUE(answers_within(a));
  EXPECT_TRUE(a.answered());
}

TEST(Supervision, NoticesReachTheLoopAlsoAfterANestedWait) {
  std::vector<std::string> seen;
  std::atomic<int> count{0};
  std::atomic<bool> in_nested{false};
  std::atomic<bool> leave_nested{false};
  Actor a("notified", [&](Pipe& pipe) {
    {
      // A nested wait on the same pipe (as the scheduler's wait for the executor): it answers
      // heartbeats but has no notice handler, so its notices are held for the main loop.
      Loop nested(&pipe);
      nested.every(1ms, [&] {
        if (leave_nested.load()) nested.stop();
      });
      pipe.signal_ready();
      in_nested = true;
      nested.run();
    }
    Loop loop(&pipe);
    loop.on_notice([&](const std::string& n) {
      seen.push_back(n);
      ++count;
    });
    loop.run();
  });
  while (!in_nested.load()) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(answers_within(a));  // the nested loop answers heartbeats
  a.notify("down executor");
  std::this_thread::sleep_for(20ms);
  leave_nested = true;
  a.notify("up executor");
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (count.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  a.term();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], "down executor");
  EXPECT_EQ(seen[1], "up executor");
}

TEST(Supervision, TheSupervisorNamesTheActorThatStoppedAndWhy) {
  Supervisor s;
  std::atomic<bool> fail{false};
  s.register_actor("fine", [] {
    return [](Pipe& pipe) {
      Loop loop(&pipe);
      pipe.signal_ready();
      loop.run();
    };
  });
  s.register_actor("fragile", [&fail] {
    return [&fail](Pipe& pipe) {
      Loop loop(&pipe);
      loop.every(1ms, [&] {
        if (fail.load()) throw std::runtime_error("the device is gone");
      });
      pipe.signal_ready();
      loop.run();
    };
  });
  s.start_threads({"fine", "fragile"});
  EXPECT_EQ(s.stopped_actor(), "");
  EXPECT_TRUE(s.heartbeat());
  fail = true;
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (s.all_alive() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(s.stopped_actor(), "fragile: the device is gone");
  std::this_thread::sleep_for(20ms);
  s.heartbeat();
  EXPECT_EQ(s.unanswered_or_stopped(), std::vector<std::string>{"fragile"});
  s.stop_threads();
}

TEST(Supervision, ControlChannelCarriesWholeMessagesAndSeesTheOtherEndClose) {
  auto [a, b] = ControlChannel::make_pair();
  EXPECT_FALSE(b.recv().has_value());  // nothing yet, and no blocking
  EXPECT_TRUE(a.send("beat"));
  EXPECT_TRUE(a.send("down executor"));
  ASSERT_TRUE(b.wait_readable(1000));
  EXPECT_EQ(b.recv(), "beat");
  EXPECT_EQ(b.recv(), "down executor");
  EXPECT_FALSE(b.recv().has_value());
  EXPECT_FALSE(b.closed());
  a = ControlChannel();  // the launcher (or the actor process) is gone
  EXPECT_TRUE(b.wait_readable(1000));
  EXPECT_FALSE(b.recv().has_value());
  EXPECT_TRUE(b.closed());
  EXPECT_FALSE(b.send("beat"));
}

TEST(Supervision, PeerNoticesRoundTripAndNothingElseParses) {
  for (const PeerNotice& n : {PeerNotice{PeerNotice::Kind::kDown, "executor"}, PeerNotice{PeerNotice::Kind::kUp, "gateway"}}) {
    EXPECT_EQ(PeerNotice::parse(n.to_string()), n) << n.to_string();
  }
  EXPECT_EQ((PeerNotice{PeerNotice::Kind::kDown, "scheduler"}.to_string()), "down scheduler");
  for (const char* bad : {"", "down", "down ", "up", "sideways executor", "down two words", "Down executor"}) {
    EXPECT_FALSE(PeerNotice::parse(bad).has_value()) << bad;
  }
}

class DeploymentLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("zinfer-lock-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string ipc(const std::string& name) const { return "ipc://" + (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(DeploymentLockTest, ASecondDeploymentOnTheSamePathsRefusesToStart) {
  EXPECT_EQ(lock_path_of("ipc:///run/z/sched.ipc"), "/run/z/sched.ipc.lock");
  EXPECT_EQ(lock_path_of("shm:///dev/shm/z.shm"), "/dev/shm/z.shm.lock");
  EXPECT_EQ(lock_path_of("tcp://127.0.0.1:5000"), "");
  EXPECT_EQ(lock_path_of("inproc://x"), "");
  const std::string shm = "shm://" + (dir_ / "executor.shm").string();
  {
    DeploymentLock first({ipc("scheduler.ipc"), shm, "tcp://127.0.0.1:1"});
    EXPECT_EQ(first.paths().size(), 2u);
    // flock locks belong to the open file: a second open in this very process conflicts too.
    try {
      DeploymentLock second({ipc("other.ipc"), shm});
      FAIL() << "the second deployment started";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find((dir_ / "executor.shm.lock").string()), std::string::npos) << what;
      EXPECT_NE(what.find("pid " + std::to_string(::getpid())), std::string::npos) << what;
    }
    // What the refused one locked before it failed is released again.
    DeploymentLock unrelated({ipc("other.ipc")});
  }
  DeploymentLock again({ipc("scheduler.ipc"), shm});  // released with the first
}

TEST_F(DeploymentLockTest, ALockFileThatIsASymbolicLinkIsRefused) {
  std::filesystem::create_symlink(dir_ / "elsewhere", dir_ / "gateway.ipc.lock");
  EXPECT_THROW(DeploymentLock({ipc("gateway.ipc")}), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "elsewhere"));
}

}  // namespace
}  // namespace zinfer::runtime
