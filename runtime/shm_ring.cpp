#include "runtime/shm_ring.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include <cerrno>
#include <unistd.h>

namespace zinfer::runtime {

namespace {

constexpr size_t kHeaderBytes = (sizeof(ShmRingHeader) + 63) / 64 * 64;

bool is_power_of_two(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// The writer's wait for room: yield a while (the reader is likely running on the other core),
// then sleep in growing steps up to a millisecond (the reader is likely asleep or descheduled: a
// full ring is back-pressure, and a millisecond is nothing next to what made the reader slow).
class RoomWait {
 public:
  explicit RoomWait(const std::function<bool()>& should_stop) : should_stop_(should_stop) {}
  void operator()() {
    if (++rounds_ <= 100) {
      std::this_thread::yield();
      return;
    }
    if (should_stop_ && should_stop_()) throw ShmRingStopped("stopped while waiting for room in a full shm ring");
    auto us = std::min<int64_t>(1000, 10 * (rounds_ - 100));
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }
  void progressed() { rounds_ = 0; }

 private:
  const std::function<bool()>& should_stop_;
  int64_t rounds_ = 0;
};

}  // namespace

size_t ShmRing::bytes_for(size_t capacity) { return kHeaderBytes + capacity; }

void ShmRing::init(void* memory, size_t capacity) {
  if (!is_power_of_two(capacity) || capacity < 64) {
    throw std::invalid_argument("shm ring capacity must be a power of two >= 64, got " + std::to_string(capacity));
  }
  auto* h = new (memory) ShmRingHeader();
  h->capacity = capacity;
  h->magic = ShmRingHeader::kMagic;
  std::atomic_thread_fence(std::memory_order_release);
}

ShmRing::ShmRing(void* memory, size_t capacity)
    : header_(static_cast<ShmRingHeader*>(memory)), data_(static_cast<char*>(memory) + kHeaderBytes), capacity_(capacity) {
  std::atomic_thread_fence(std::memory_order_acquire);
  if (header_->magic != ShmRingHeader::kMagic || header_->capacity != capacity) {
    throw std::runtime_error("no shm ring of " + std::to_string(capacity) + " bytes in this memory");
  }
}

// ---- writer ----

ShmRingWriter::ShmRingWriter(ShmRing ring, int wake_fd)
    : ring_(ring), wake_fd_(wake_fd), tail_(ring.header().tail.load(std::memory_order_relaxed)) {}

void ShmRingWriter::write(std::string_view message, const std::function<bool()>& should_stop) {
  if (message.size() > UINT32_MAX) {
    throw std::length_error("shm ring: a message of " + std::to_string(message.size()) + " bytes (the limit is 4 GiB)");
  }
  const auto n = static_cast<uint32_t>(message.size());
  const char len[4] = {static_cast<char>(n), static_cast<char>(n >> 8), static_cast<char>(n >> 16),
                       static_cast<char>(n >> 24)};
  const uint64_t head = ring_.header().head.load(std::memory_order_acquire);
  if (ring_.capacity() - (tail_ - head) >= 4 + message.size()) {
    // The common case: the whole frame fits, one copy and one publish.
    copy_in(len, 4);
    copy_in(message.data(), message.size());
    publish();
    return;
  }
  // Stream the frame through in pieces, waiting for the reader to make room.
  RoomWait wait(should_stop);
  for (std::string_view part : {std::string_view(len, 4), message}) {
    size_t done = 0;
    while (done < part.size()) {
      size_t now = put(part, done);
      if (now == done) {
        wait();
      } else {
        wait.progressed();
      }
      done = now;
    }
  }
}

size_t ShmRingWriter::put(std::string_view bytes, size_t done) {
  ShmRingHeader& h = ring_.header();
  const size_t cap = ring_.capacity();
  const uint64_t head = h.head.load(std::memory_order_acquire);
  const size_t room = cap - static_cast<size_t>(tail_ - head);
  const size_t n = std::min(room, bytes.size() - done);
  if (n == 0) return done;
  copy_in(bytes.data() + done, n);
  publish();
  return done + n;
}

void ShmRingWriter::copy_in(const char* src, size_t n) {
  const size_t cap = ring_.capacity();
  const size_t pos = static_cast<size_t>(tail_ & (cap - 1));
  const size_t first = std::min(n, cap - pos);
  std::memcpy(ring_.data() + pos, src, first);
  std::memcpy(ring_.data(), src + first, n - first);
  tail_ += n;
}

void ShmRingWriter::publish() {
  ring_.header().tail.store(tail_, std::memory_order_release);
  wake_reader();
}

void ShmRingWriter::wake_reader() {
  ShmRingHeader& h = ring_.header();
  // Dekker with prepare_sleep(): our tail store, then the load of the flag.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (h.reader_asleep.load(std::memory_order_relaxed) == 0) return;
  if (h.reader_asleep.exchange(0, std::memory_order_acq_rel) == 0) return;  // someone else woke it
  if (wake_fd_ < 0) return;
  const char byte = 1;
  // EAGAIN: the FIFO is full of wake bytes, so the reader will wake anyway. EINTR: retry once.
  if (::write(wake_fd_, &byte, 1) < 0 && errno == EINTR) (void)::write(wake_fd_, &byte, 1);
}

// ---- reader ----

ShmRingReader::ShmRingReader(ShmRing ring, int wake_fd)
    : ring_(ring), wake_fd_(wake_fd), head_(ring.header().head.load(std::memory_order_relaxed)) {}

bool ShmRingReader::has_data() const {
  return ring_.header().tail.load(std::memory_order_acquire) != head_;
}

size_t ShmRingReader::take(char* dst, size_t want, uint64_t tail) {
  const size_t cap = ring_.capacity();
  const size_t n = std::min(want, static_cast<size_t>(tail - head_));
  if (n == 0) return 0;
  const size_t pos = static_cast<size_t>(head_ & (cap - 1));
  const size_t first = std::min(n, cap - pos);
  std::memcpy(dst, ring_.data() + pos, first);
  std::memcpy(dst + first, ring_.data(), n - first);
  head_ += n;
  return n;
}

std::optional<std::string> ShmRingReader::try_read() {
  ShmRingHeader& h = ring_.header();
  uint64_t tail = h.tail.load(std::memory_order_acquire);
  for (;;) {
    const uint64_t before = head_;
    if (len_have_ < 4) {
      len_have_ += take(reinterpret_cast<char*>(len_bytes_) + len_have_, 4 - len_have_, tail);
      if (len_have_ == 4) {
        const uint32_t n = uint32_t(len_bytes_[0]) | uint32_t(len_bytes_[1]) << 8 | uint32_t(len_bytes_[2]) << 16 |
                           uint32_t(len_bytes_[3]) << 24;
        body_.resize(n);
        body_have_ = 0;
      }
    }
    if (len_have_ == 4) body_have_ += take(body_.data() + body_have_, body_.size() - body_have_, tail);
    // Hand the room back at once: a writer streaming a large frame waits for it.
    if (head_ != before) h.head.store(head_, std::memory_order_release);
    if (len_have_ == 4 && body_have_ == body_.size()) {
      len_have_ = 0;
      body_have_ = 0;
      return std::exchange(body_, std::string());
    }
    // Incomplete: go on while the writer keeps publishing (a frame larger than the ring).
    const uint64_t now = h.tail.load(std::memory_order_acquire);
    if (now == tail) return std::nullopt;
    tail = now;
  }
}

bool ShmRingReader::prepare_sleep() {
  ShmRingHeader& h = ring_.header();
  h.reader_asleep.store(1, std::memory_order_relaxed);
  // Dekker with wake_reader(): our flag store, then the load of tail.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (h.tail.load(std::memory_order_relaxed) != head_) {
    h.reader_asleep.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void ShmRingReader::after_sleep(bool drain) {
  ring_.header().reader_asleep.store(0, std::memory_order_relaxed);
  if (wake_fd_ < 0 || !drain) return;
  char buf[64];
  while (::read(wake_fd_, buf, sizeof buf) > 0) {
  }
}

}  // namespace zinfer::runtime
