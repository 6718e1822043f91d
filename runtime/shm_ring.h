// A single-producer single-consumer message ring in memory shared by two processes (or threads):
// the transport of shm:// links (runtime/shm_link.h). One writer and one reader, each in its own
// process; nothing here takes a lock or makes a system call on the data path.
//
// Layout (ShmRingHeader, then `capacity` data bytes, capacity a power of two): `tail` is the byte
// count ever written (the writer's), `head` the byte count ever consumed (the reader's); both only
// grow (64-bit: they never wrap in practice), a position is `count & (capacity - 1)`. Each message
// is a frame: a 4-byte little-endian length, then the bytes. A message may be larger than the
// ring: it streams through in pieces, the writer publishing what fits and waiting for room, the
// reader collecting the pieces until the frame is whole. So no size is refused below 4 GiB; a
// large message only costs the writer the wait for the reader to drain it.
//
// Memory ordering: the writer copies bytes, then stores `tail` with release; the reader loads
// `tail` with acquire, copies, then stores `head` with release (the writer's acquire load of
// `head` tells it the bytes may be overwritten).
//
// Wake-ups (an eventcount): the reader polls `tail` while it expects work (the Loop's spin phase).
// Before it sleeps it stores `reader_asleep` = 1 and checks `tail` once more; the writer, after
// storing `tail`, checks `reader_asleep` and, if set, clears it and writes one byte to the
// reader's wake fd (a FIFO for shm:// links), which the reader's poll() watches. Both sides do
// store-then-load on two variables (Dekker), so both use seq_cst fences: either the reader sees
// the new tail and does not sleep, or the writer sees the flag and signals. A wake byte that
// arrives when the reader did not sleep after all is drained on its next wake-up: spurious, never
// lost.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace zinfer::runtime {

struct ShmRingHeader {
  static constexpr uint64_t kMagic = 0x7a696e6672696e67ULL;  // "zinfring"
  uint64_t magic = 0;
  uint64_t capacity = 0;
  alignas(64) std::atomic<uint64_t> tail{0};            // the writer's cache line
  alignas(64) std::atomic<uint64_t> head{0};            // the reader's
  alignas(64) std::atomic<uint32_t> reader_asleep{0};   // the eventcount's flag
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "the ring's counters must be lock-free to be shared between processes");

// Thrown by a writer whose wait for room was ended by its stop predicate (Term, a dead peer).
class ShmRingStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShmRing {
 public:
  // Bytes of shared memory a ring of `capacity` data bytes needs (header + data).
  static size_t bytes_for(size_t capacity);
  // Initialises a ring in zeroed or reused memory; capacity must be a power of two >= 64
  // (std::invalid_argument otherwise). Only the creator calls it, before the peer maps the memory.
  static void init(void* memory, size_t capacity);
  // Views an initialised ring (std::runtime_error when `memory` holds none of `capacity`).
  ShmRing(void* memory, size_t capacity);

  ShmRingHeader& header() const { return *header_; }
  char* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  ShmRingHeader* header_;
  char* data_;
  size_t capacity_;
};

class ShmRingWriter {
 public:
  // wake_fd: where one byte wakes a sleeping reader (-1: the reader never sleeps, e.g. tests).
  ShmRingWriter(ShmRing ring, int wake_fd);

  // Appends one message. While the ring is full it waits for the reader (yielding, then sleeping
  // up to a millisecond at a time) and calls `should_stop` about every millisecond: when that
  // returns true it throws ShmRingStopped, and the ring holds part of a frame (the link is then
  // unusable, which is what a stop means). Messages of 4 GiB or more: std::length_error.
  void write(std::string_view message, const std::function<bool()>& should_stop = {});

 private:
  // Copies what fits of `bytes` (from `done`), publishes it, wakes the reader; returns the new done.
  size_t put(std::string_view bytes, size_t done);
  void copy_in(const char* src, size_t n);  // at our tail, not yet visible to the reader
  void publish();                           // makes the copied bytes visible, wakes the reader
  void wake_reader();

  ShmRing ring_;
  int wake_fd_;
  uint64_t tail_;  // our own copy: only this writer stores tail
};

class ShmRingReader {
 public:
  // wake_fd: the fd the writer's byte arrives on (-1: none; the reader must then never sleep).
  ShmRingReader(ShmRing ring, int wake_fd);

  // True when bytes are waiting (a whole message or part of one): one atomic load.
  bool has_data() const;
  // One whole message, or nullopt when none is complete yet (the part that has arrived is kept).
  std::optional<std::string> try_read();

  // The eventcount, for a reactor that blocks in poll() on wake_fd(): call prepare_sleep() before
  // blocking; when it returns false data arrived meanwhile, so do not block. After the poll
  // (whatever woke it) call after_sleep(), which clears the flag and drains the wake fd
  // (`drain` false: the poll did not report the fd readable, so skip the read; a byte that came
  // in after the poll just makes the next sleep return at once).
  bool prepare_sleep();
  void after_sleep(bool drain = true);
  int wake_fd() const { return wake_fd_; }

 private:
  // Copies up to `want` bytes at our head into dst; returns how many (and advances head).
  size_t take(char* dst, size_t want, uint64_t tail);

  ShmRing ring_;
  int wake_fd_;
  uint64_t head_;  // our own copy: only this reader stores head
  // The frame being collected: its length (once its 4 bytes are in) and the bytes so far.
  unsigned char len_bytes_[4] = {};
  size_t len_have_ = 0;
  std::string body_;
  size_t body_have_ = 0;
};

}  // namespace zinfer::runtime
