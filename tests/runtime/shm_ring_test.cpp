// The shm ring on its own (runtime/shm_ring.h): framing across the wrap-around, back-pressure
// when full, messages larger than the ring, and the eventcount across a fork()ed process.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/shm_ring.h"
#include "tests/runtime/shm_test_util.h"

using namespace zinfer::runtime;
using zinfer::runtime::test::read_blocking;

namespace {

// A ring in memory shared with children forked later (MAP_SHARED | MAP_ANONYMOUS).
class SharedRing {
 public:
  explicit SharedRing(size_t capacity) : capacity_(capacity), bytes_(ShmRing::bytes_for(capacity)) {
    memory_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory_ == MAP_FAILED) throw std::runtime_error("mmap");
    ShmRing::init(memory_, capacity);
  }
  ~SharedRing() { munmap(memory_, bytes_); }
  ShmRing ring() const { return ShmRing(memory_, capacity_); }

 private:
  size_t capacity_;
  size_t bytes_;
  void* memory_;
};

std::string payload(int i, size_t size) {
  std::string s(size, '\0');
  for (size_t k = 0; k < size; ++k) s[k] = static_cast<char>('a' + (i * 7 + static_cast<int>(k)) % 26);
  return s;
}

}  // namespace

TEST(ShmRing, RejectsCapacityThatIsNotAPowerOfTwo) {
  std::vector<char> mem(ShmRing::bytes_for(100));
  EXPECT_THROW(ShmRing::init(mem.data(), 100), std::invalid_argument);
  EXPECT_THROW(ShmRing::init(mem.data(), 32), std::invalid_argument);
}

TEST(ShmRing, MessagesKeepTheirBytesAcrossTheWrapAround) {
  SharedRing shared(64);
  ShmRingWriter w(shared.ring(), -1);
  ShmRingReader r(shared.ring(), -1);
  EXPECT_FALSE(r.has_data());
  EXPECT_FALSE(r.try_read());
  // Sizes that do not divide 64, so that frames (and their 4-byte lengths) straddle the end.
  for (int i = 0; i < 500; ++i) {
    const size_t size = static_cast<size_t>(i % 29);
    w.write(payload(i, size));
    ASSERT_TRUE(r.has_data());
    auto m = r.try_read();
    ASSERT_TRUE(m) << i;
    EXPECT_EQ(*m, payload(i, size)) << i;
    EXPECT_FALSE(r.has_data());
  }
  // Two at a time: the reader sees them in order.
  w.write("first");
  w.write("second");
  EXPECT_EQ(*r.try_read(), "first");
  EXPECT_EQ(*r.try_read(), "second");
  EXPECT_FALSE(r.try_read());
}

// Invariant 27 (docs/architecture.md): back-pressure, not loss.
TEST(ShmRing, FullRingMakesTheWriterWait) {
  SharedRing shared(64);
  ShmRingReader r(shared.ring(), -1);
  std::atomic<int> written{0};
  // Frames of 4 + 28 = 32 bytes: two fill the ring, the third cannot be written until one is read.
  std::thread writer([&] {
    ShmRingWriter w(shared.ring(), -1);
    for (int i = 0; i < 3; ++i) {
      w.write(payload(i, 28));
      written = i + 1;
    }
  });
  while (written < 2) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(written.load(), 2) << "the third message cannot fit before the reader makes room";
  EXPECT_EQ(*r.try_read(), payload(0, 28));
  writer.join();
  EXPECT_EQ(written.load(), 3);
  EXPECT_EQ(*r.try_read(), payload(1, 28));
  EXPECT_EQ(*r.try_read(), payload(2, 28));
}

TEST(ShmRing, AStopPredicateEndsTheWaitForRoom) {
  SharedRing shared(64);
  ShmRingWriter w(shared.ring(), -1);
  w.write(payload(0, 60));
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop = true;
  });
  EXPECT_THROW(w.write(payload(1, 10), [&] { return stop.load(); }), ShmRingStopped);
  stopper.join();
}

// Invariant 27 (docs/architecture.md): back-pressure, not loss.
TEST(ShmRing, MessagesLargerThanTheRingStreamThrough) {
  SharedRing shared(64);
  const std::vector<size_t> sizes = {1000, 64, 60, 61, 0, 100000, 3};
  std::thread writer([&] {
    ShmRingWriter w(shared.ring(), -1);
    for (size_t i = 0; i < sizes.size(); ++i) w.write(payload(static_cast<int>(i), sizes[i]));
  });
  ShmRingReader r(shared.ring(), -1);
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::optional<std::string> m;
    while (!(m = r.try_read())) std::this_thread::yield();
    EXPECT_EQ(m->size(), sizes[i]);
    EXPECT_EQ(*m, payload(static_cast<int>(i), sizes[i])) << i;
  }
  writer.join();
}

TEST(ShmRing, PrepareSleepRefusesWhenDataIsWaiting) {
  SharedRing shared(64);
  ShmRingWriter w(shared.ring(), -1);
  ShmRingReader r(shared.ring(), -1);
  EXPECT_TRUE(r.prepare_sleep());
  r.after_sleep();
  w.write("x");
  EXPECT_FALSE(r.prepare_sleep());
  EXPECT_EQ(*r.try_read(), "x");
}

// Ping-pong between this process and a fork()ed child, each blocking in poll() on its wake fd
// (a pipe here; a FIFO in shm links) after publishing "asleep": every message goes through the
// eventcount, and a single lost wake-up would stall the exchange.
TEST(ShmRing, EventcountLosesNoWakeUpAcrossProcesses) {
  SharedRing to_child(256), to_parent(256);
  int child_wake[2], parent_wake[2];
  ASSERT_EQ(pipe2(child_wake, O_NONBLOCK), 0);
  ASSERT_EQ(pipe2(parent_wake, O_NONBLOCK), 0);
  constexpr int kRounds = 20000;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int status = 0;
    try {
      ShmRingReader in(to_child.ring(), child_wake[0]);
      ShmRingWriter out(to_parent.ring(), parent_wake[1]);
      for (int i = 0; i < kRounds; ++i) {
        std::string m = read_blocking(in);
        // Every 100th message is larger than the ring: it streams through the wake-ups too.
        if (m != payload(i, i % 100 == 0 ? 1000 : static_cast<size_t>(i % 50))) {
          status = 2;
          break;
        }
        out.write(m);
      }
    } catch (...) {
      status = 3;
    }
    _exit(status);
  }
  ShmRingWriter out(to_child.ring(), child_wake[1]);
  ShmRingReader in(to_parent.ring(), parent_wake[0]);
  int i = 0;
  try {
    for (; i < kRounds; ++i) {
      const std::string m = payload(i, i % 100 == 0 ? 1000 : static_cast<size_t>(i % 50));
      out.write(m);
      ASSERT_EQ(read_blocking(in), m) << "round " << i;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "round " << i << ": " << e.what();
    kill(pid, SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  for (int fd : {child_wake[0], child_wake[1], parent_wake[0], parent_wake[1]}) close(fd);
}
