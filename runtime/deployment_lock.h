// One deployment per set of endpoints: `zinfer launch` takes an exclusive flock(2) on
// `<path>.lock` next to every ipc:// and shm:// endpoint it serves before it starts an actor, so
// that a second launch on the same paths refuses to start instead of removing and re-creating
// a live deployment's sockets and rings (docs/architecture.md, I38). The lock belongs to the
// launcher process (its descriptors are close-on-exec): the kernel releases it when the launcher
// exits, however it exits, and the actors it started die with it (runtime/parent_death.h).
// tcp:// endpoints need no lock: a second bind fails by itself.
#pragma once

#include <string>
#include <vector>

namespace zinfer::runtime {

// The lock file of an endpoint: "<path>.lock" for ipc:// and shm:// endpoints, "" for others.
std::string lock_path_of(const std::string& endpoint);

class DeploymentLock {
 public:
  // Locks every endpoint's lock file; throws std::runtime_error naming the file (and the pid
  // written in it) when another process holds one, or when a file cannot be opened (a symbolic
  // link is refused).
  explicit DeploymentLock(const std::vector<std::string>& endpoints);
  ~DeploymentLock();
  DeploymentLock(const DeploymentLock&) = delete;
  DeploymentLock& operator=(const DeploymentLock&) = delete;

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::vector<int> fds_;
  std::vector<std::string> paths_;
};

}  // namespace zinfer::runtime
