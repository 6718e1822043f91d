// shm:// links (runtime/shm_link.h): the files the binder creates and removes, a connector that
// comes first and waits, Term ending that wait, a stale file left by a dead binder, and
// ping-pong with a fork()ed process through the FIFO wake-ups.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <set>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/shm_link.h"
#include "tests/runtime/shm_test_util.h"

using namespace zinfer::runtime;
using zinfer::runtime::test::read_blocking;
using zinfer::runtime::test::TempFolder;
namespace fs = std::filesystem;


TEST(ShmLink, EndpointScheme) {
  EXPECT_TRUE(is_shm_endpoint("shm:///tmp/x"));
  EXPECT_EQ(shm_path("shm:///tmp/x"), "/tmp/x");
  EXPECT_FALSE(is_shm_endpoint("ipc:///tmp/x"));
  EXPECT_EQ(shm_path("ipc:///tmp/x"), "");
}

TEST(ShmLink, BinderCreatesAndRemovesItsFiles) {
  TempFolder dir;
  const std::string path = dir.file("link");
  {
    auto binder = ShmLink::bind(path, 4096);
    EXPECT_TRUE(fs::exists(path));
    EXPECT_TRUE(fs::is_fifo(path + ".wake-binder"));
    EXPECT_TRUE(fs::is_fifo(path + ".wake-connector"));
    auto connector = ShmLink::connect(path);
    connector->send("to the binder");
    binder->send("to the connector");
    EXPECT_EQ(*binder->reader().try_read(), "to the binder");
    EXPECT_EQ(*connector->reader().try_read(), "to the connector");
    EXPECT_TRUE(binder->peer_alive());
    EXPECT_TRUE(connector->peer_alive());
  }
  EXPECT_EQ(dir.entries(), 0u) << "the binder removes the link's files";
}

// Invariant 10 (docs/architecture.md): each actor binds its own endpoint; start order only matters for readiness.
TEST(ShmLink, ConnectorWaitsForTheBinder) {
  TempFolder dir;
  const std::string path = dir.file("late");
  std::unique_ptr<ShmLink> connector;
  std::thread t([&] { connector = ShmLink::connect(path); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  auto binder = ShmLink::bind(path, 4096);
  t.join();
  ASSERT_TRUE(connector);
  connector->send("hello");
  EXPECT_EQ(read_blocking(binder->reader()), "hello");
}

TEST(ShmLink, TermEndsTheConnectorsWait) {
  TempFolder dir;
  std::atomic<bool> term{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    term = true;
  });
  EXPECT_THROW(ShmLink::connect(dir.file("never"), [&] { return term.load(); }), ShmRingStopped);
  stopper.join();
}

TEST(ShmLink, AFileLeftByADeadBinderIsNotConnected) {
  TempFolder dir;
  const std::string path = dir.file("stale");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    (void)ShmLink::bind(path, 4096).release();  // never destroyed: the files stay, as after a crash
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(fs::exists(path));
  int polls = 0;
  EXPECT_THROW(ShmLink::connect(path, [&] { return ++polls > 5; }), ShmRingStopped)
      << "a link whose binder died is stale";
  // A new binder replaces the stale files; a connector then gets through.
  auto binder = ShmLink::bind(path, 4096);
  auto connector = ShmLink::connect(path);
  connector->send("fresh");
  EXPECT_EQ(read_blocking(binder->reader()), "fresh");
}

// Another local user's links: the binder builds its file under a name made by mkstemp, so a link
// planted at the old predictable temporary name (path.tmp.<pid>) is never written through; the
// link file it renames into place replaces a planted link instead of following it; a connector
// refuses a path that is a link.
TEST(ShmLink, PlantedSymbolicLinksAreNeverFollowed) {
  TempFolder dir;
  const std::string victim = dir.file("victim");
  {
    std::FILE* f = std::fopen(victim.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("precious", f);
    std::fclose(f);
  }
  const std::string path = dir.file("link");
  const std::string predictable = path + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(victim, predictable);
  {
    auto binder = ShmLink::bind(path, 4096);
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path)));  // the link file itself, not a link
    auto connector = ShmLink::connect(path);
    connector->send("ping");
    EXPECT_EQ(read_blocking(binder->reader()), "ping");
  }
  EXPECT_EQ(fs::file_size(victim), 8u);  // untouched: "precious"
  std::set<std::string> left;             // the binder's files are gone, no temporary one stays
  for (const auto& e : fs::directory_iterator(fs::path(victim).parent_path())) left.insert(e.path().string());
  EXPECT_EQ(left, (std::set<std::string>{victim, predictable}));

  const std::string planted = dir.file("planted");
  fs::create_symlink(victim, planted);
  int polls = 0;
  try {
    ShmLink::connect(planted, [&] { return ++polls > 3; });
    FAIL() << "a link was followed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(victim), 8u);
}

TEST(ShmLink, SenderToADeadPeerStopsWhenTheRingIsFull) {
  TempFolder dir;
  const std::string path = dir.file("dead-peer");
  auto binder = ShmLink::bind(path, 4096);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto c = ShmLink::connect(path);
    _exit(c ? 0 : 1);  // the connector process ends without reading anything
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_FALSE(binder->peer_alive());
  const std::string big(1000, 'x');
  EXPECT_THROW(
      for (int i = 0; i < 10; ++i) binder->send(big), ShmRingStopped);
}

// Ping-pong with a fork()ed connector, both sleeping on their FIFOs between messages.
TEST(ShmLink, PingPongWithAnotherProcessThroughTheFifos) {
  TempFolder dir;
  const std::string path = dir.file("pingpong");
  auto binder = ShmLink::bind(path, 4096);
  constexpr int kRounds = 5000;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int status = 0;
    try {
      auto c = ShmLink::connect(path);
      for (int i = 0; i < kRounds; ++i) {
        std::string m = read_blocking(c->reader());
        c->send(m + "!");
      }
    } catch (...) {
      status = 3;
    }
    _exit(status);
  }
  for (int i = 0; i < kRounds; ++i) {
    // Every 50th message is larger than the ring.
    std::string m = i % 50 == 0 ? std::string(10000, static_cast<char>('a' + i % 26)) : std::to_string(i);
    binder->send(m);
    ASSERT_EQ(read_blocking(binder->reader()), m + "!") << "round " << i;
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}
