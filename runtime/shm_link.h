// A duplex shm:// link between two processes of one host: two ShmRings (runtime/shm_ring.h) in
// one shared file, one ring per direction, each with one writer and one reader. Used where a
// link has exactly one sender per direction (scheduler <-> executor, scheduler -> detokenizer):
// a message then costs a copy into the ring and, only when the reader sleeps, one byte through a
// FIFO, instead of four thread wake-ups through ZeroMQ's I/O threads and a unix socket.
//
// Files, for `shm://<path>`:
//   <path>                 the shared memory: a header, the ring to the binder, the ring to the
//                          connector (mapped by both; on tmpfs such as /dev/shm it never touches a disk)
//   <path>.wake-binder     FIFO: a byte here wakes the binder's reader when it sleeps
//   <path>.wake-connector  FIFO: the same for the connector's reader
// The binder (the side that owns the endpoint, as with bind()) removes stale files, creates the
// FIFOs, builds the memory in a temporary file and renames it to <path>, so that a connector
// never sees a half-built link; it removes the three files when it is destroyed (if they are
// still its own). The connector waits until <path> exists and names a live binder (a file left by
// a binder that died is skipped until a new binder replaces it). Liveness is a kill(pid, 0) on
// the pid the other side wrote into the file, so both processes must share a PID namespace (one
// host, one container).
//
// A link is used by one thread on each side (its reader and writer are not thread-safe).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/shm_ring.h"

namespace zinfer::runtime {

class ShmLink {
 public:
  // Per direction. A larger message streams through in pieces (runtime/shm_ring.h).
  static constexpr size_t kDefaultRingBytes = size_t(1) << 20;

  // Creates the link's files at `path`. Throws std::runtime_error naming the path and the error.
  static std::unique_ptr<ShmLink> bind(const std::string& path, size_t ring_bytes = kDefaultRingBytes);
  // Opens the link a binder created at `path`, waiting (polling every few milliseconds) until
  // there is one; `should_stop` (e.g. the actor's Term) ends the wait with ShmRingStopped.
  static std::unique_ptr<ShmLink> connect(const std::string& path, const std::function<bool()>& should_stop = {});

  ~ShmLink();
  ShmLink(const ShmLink&) = delete;
  ShmLink& operator=(const ShmLink&) = delete;

  // Sends one message to the peer; waits while its ring is full (back-pressure). Throws
  // ShmRingStopped when `should_stop` says so or the peer process is gone during that wait.
  void send(std::string_view message, const std::function<bool()>& should_stop = {});
  ShmRingReader& reader() { return *reader_; }
  ShmRingWriter& writer() { return *writer_; }
  const std::string& path() const { return path_; }
  // False once the peer's process has exited (true while no peer has connected yet).
  bool peer_alive() const;

 private:
  struct Mapping;
  ShmLink(std::string path, bool binder, std::unique_ptr<Mapping> mapping, int wake_mine, int wake_peer);

  std::string path_;
  bool binder_;
  std::unique_ptr<Mapping> mapping_;
  int wake_mine_;  // the FIFO our reader sleeps on
  int wake_peer_;  // the FIFO that wakes the peer's reader
  std::unique_ptr<ShmRingReader> reader_;
  std::unique_ptr<ShmRingWriter> writer_;
};

// "shm://<path>" -> "<path>"; "" for any other scheme.
std::string shm_path(const std::string& endpoint);
bool is_shm_endpoint(const std::string& endpoint);

}  // namespace zinfer::runtime
