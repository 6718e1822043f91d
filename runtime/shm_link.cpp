#include "runtime/shm_link.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/logging.h"

namespace zinfer::runtime {

namespace {

constexpr uint64_t kLinkMagic = 0x7a696e666c696e6bULL;  // "zinflink"
constexpr uint32_t kLinkVersion = 1;
constexpr size_t kPage = 4096;

// The first page of the file.
struct LinkHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t reserved;
  uint64_t ring_bytes;
  std::atomic<int32_t> binder_pid;
  std::atomic<int32_t> connector_pid;
};

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
size_t ring_offset(int which, size_t ring_bytes) {
  return kPage + static_cast<size_t>(which) * round_up(ShmRing::bytes_for(ring_bytes), kPage);
}
size_t file_bytes(size_t ring_bytes) { return ring_offset(2, ring_bytes); }

// Ring 0 carries connector -> binder, ring 1 binder -> connector.
constexpr int kToBinder = 0;
constexpr int kToConnector = 1;

std::string wake_path(const std::string& path, bool binder) {
  return path + (binder ? ".wake-binder" : ".wake-connector");
}

std::runtime_error sys_error(const std::string& what, const std::string& path) {
  return std::runtime_error("shm link " + path + ": " + what + ": " + std::strerror(errno));
}

bool process_alive(int32_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

int open_fifo(const std::string& path) {
  // O_RDWR: the open never blocks, a write never raises SIGPIPE (we hold a read end ourselves),
  // and the reader's poll() never reports a hang-up while the peer is away (Linux semantics).
  // O_NOFOLLOW: a link put in the FIFO's place is refused, never followed.
  return ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
}

}  // namespace

struct ShmLink::Mapping {
  void* memory = MAP_FAILED;
  size_t bytes = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  ~Mapping() {
    if (memory != MAP_FAILED) ::munmap(memory, bytes);
  }
  LinkHeader& header() const { return *static_cast<LinkHeader*>(memory); }
  void* ring(int which) const {
    return static_cast<char*>(memory) + ring_offset(which, header().ring_bytes);
  }
};

std::string shm_path(const std::string& endpoint) {
  constexpr std::string_view kScheme = "shm://";
  if (endpoint.rfind(kScheme, 0) != 0) return "";
  return endpoint.substr(kScheme.size());
}

bool is_shm_endpoint(const std::string& endpoint) { return endpoint.rfind("shm://", 0) == 0; }

ShmLink::ShmLink(std::string path, bool binder, std::unique_ptr<Mapping> mapping, int wake_mine, int wake_peer)
    : path_(std::move(path)), binder_(binder), mapping_(std::move(mapping)), wake_mine_(wake_mine), wake_peer_(wake_peer) {
  const size_t ring_bytes = mapping_->header().ring_bytes;
  const int in = binder_ ? kToBinder : kToConnector;
  const int out = binder_ ? kToConnector : kToBinder;
  reader_ = std::make_unique<ShmRingReader>(ShmRing(mapping_->ring(in), ring_bytes), wake_mine_);
  writer_ = std::make_unique<ShmRingWriter>(ShmRing(mapping_->ring(out), ring_bytes), wake_peer_);
}

std::unique_ptr<ShmLink> ShmLink::bind(const std::string& path, size_t ring_bytes) {
  if (path.empty()) throw std::runtime_error("shm link: empty path");
  // Whatever a previous binder left (it died without cleaning up) goes: like a stale ipc socket.
  for (const std::string& p : {path, wake_path(path, true), wake_path(path, false)}) ::unlink(p.c_str());
  for (bool b : {true, false}) {
    if (::mkfifo(wake_path(path, b).c_str(), 0600) != 0) throw sys_error("cannot create " + wake_path(path, b), path);
  }
  auto m = std::make_unique<Mapping>();
  m->bytes = file_bytes(ring_bytes);
  // The file is built under a name no one can guess beforehand (mkstemp: created with O_EXCL,
  // mode 0600), so another local user cannot have put a link there for the binder to write
  // through; it gets its real name by rename, which replaces a link rather than following it.
  std::string tmp = path + ".XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw sys_error("cannot create a temporary file beside it", path);
  struct stat st {};
  if (::ftruncate(fd, static_cast<off_t>(m->bytes)) != 0 || ::fstat(fd, &st) != 0) {
    auto e = sys_error("cannot size " + tmp, path);
    ::close(fd);
    ::unlink(tmp.c_str());
    throw e;
  }
  m->memory = ::mmap(nullptr, m->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m->memory == MAP_FAILED) {
    auto e = sys_error("cannot map " + tmp, path);
    ::unlink(tmp.c_str());
    throw e;
  }
  m->dev = st.st_dev;
  m->ino = st.st_ino;
  new (m->memory) LinkHeader{kLinkMagic, kLinkVersion, 0, ring_bytes, {::getpid()}, {0}};
  try {
    ShmRing::init(m->ring(kToBinder), ring_bytes);
    ShmRing::init(m->ring(kToConnector), ring_bytes);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // Everything is written before the file gets its name (rename is atomic).
  std::atomic_thread_fence(std::memory_order_release);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto e = sys_error("cannot rename " + tmp + " to it", path);
    ::unlink(tmp.c_str());
    throw e;
  }
  int mine = open_fifo(wake_path(path, true));
  int peer = open_fifo(wake_path(path, false));
  if (mine < 0 || peer < 0) {
    auto e = sys_error("cannot open its wake FIFOs", path);
    if (mine >= 0) ::close(mine);
    if (peer >= 0) ::close(peer);
    throw e;
  }
  return std::unique_ptr<ShmLink>(new ShmLink(path, true, std::move(m), mine, peer));
}

std::unique_ptr<ShmLink> ShmLink::connect(const std::string& path, const std::function<bool()>& should_stop) {
  if (path.empty()) throw std::runtime_error("shm link: empty path");
  const auto start = std::chrono::steady_clock::now();
  bool said = false;
  for (;;) {
    if (should_stop && should_stop()) throw ShmRingStopped("stopped while waiting for shm link " + path + " to be bound");
    if (!said && std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) {
      // A binder started after its connector in one thread of startup would wait forever: say so.
      logger("runtime")->warn("still waiting for shm link {} to be bound (its binder, the actor that owns the "
                              "endpoint, must be started before or alongside this one)", path);
      said = true;
    }
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ELOOP) throw sys_error("is a symbolic link; a shm link must be the file itself", path);
    if (fd >= 0) {
      struct stat st {};
      auto m = std::make_unique<Mapping>();
      if (::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= kPage) {
        m->bytes = static_cast<size_t>(st.st_size);
        m->memory = ::mmap(nullptr, m->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      }
      ::close(fd);
      if (m->memory == MAP_FAILED) throw sys_error("cannot map it", path);
      std::atomic_thread_fence(std::memory_order_acquire);
      LinkHeader& h = m->header();
      if (h.magic != kLinkMagic || h.version != kLinkVersion || file_bytes(h.ring_bytes) != m->bytes) {
        throw std::runtime_error("shm link " + path + ": not a zinfer shm link of version " +
                                 std::to_string(kLinkVersion));
      }
      // A file whose binder died is stale: wait for a new binder to replace it.
      if (process_alive(h.binder_pid.load())) {
        int mine = open_fifo(wake_path(path, false));
        int peer = open_fifo(wake_path(path, true));
        if (mine >= 0 && peer >= 0) {
          h.connector_pid.store(::getpid());
          return std::unique_ptr<ShmLink>(new ShmLink(path, false, std::move(m), mine, peer));
        }
        if (mine >= 0) ::close(mine);
        if (peer >= 0) ::close(peer);
      }
    } else if (errno != ENOENT) {
      throw sys_error("cannot open it", path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

ShmLink::~ShmLink() {
  reader_.reset();
  writer_.reset();
  if (wake_mine_ >= 0) ::close(wake_mine_);
  if (wake_peer_ >= 0) ::close(wake_peer_);
  if (binder_) {
    // Remove the files only if they are still ours: a new binder may have replaced them.
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && st.st_dev == mapping_->dev && st.st_ino == mapping_->ino) {
      ::unlink(path_.c_str());
      ::unlink(wake_path(path_, true).c_str());
      ::unlink(wake_path(path_, false).c_str());
    }
  }
}

bool ShmLink::peer_alive() const {
  const LinkHeader& h = mapping_->header();
  if (!binder_) return process_alive(h.binder_pid.load());
  const int32_t pid = h.connector_pid.load();
  return pid == 0 || process_alive(pid);
}

void ShmLink::send(std::string_view message, const std::function<bool()>& should_stop) {
  writer_->write(message, [&] {
    if (should_stop && should_stop()) return true;
    if (!peer_alive()) throw ShmRingStopped("shm link " + path_ + ": the peer process is gone and its ring is full");
    return false;
  });
}

}  // namespace zinfer::runtime
