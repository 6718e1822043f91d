#include "runtime/deployment_lock.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace zinfer::runtime {

std::string lock_path_of(const std::string& endpoint) {
  for (std::string_view scheme : {"ipc://", "shm://"}) {
    if (endpoint.rfind(scheme, 0) == 0 && endpoint.size() > scheme.size()) {
      return endpoint.substr(scheme.size()) + ".lock";
    }
  }
  return "";
}

namespace {

std::string holder_of(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? std::string() : " (pid " + pid + ")";
}

}  // namespace

DeploymentLock::DeploymentLock(const std::vector<std::string>& endpoints) {
  try {
    for (const auto& endpoint : endpoints) {
      const std::string path = lock_path_of(endpoint);
      if (path.empty()) continue;
      bool seen = false;
      for (const auto& p : paths_) seen = seen || p == path;
      if (seen) continue;
      int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0) {
        throw std::runtime_error("cannot open the lock file " + path + " of endpoint " + endpoint + ": " +
                                 std::strerror(errno));
      }
      if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        const std::string holder = holder_of(fd);
        ::close(fd);
        if (err == EWOULDBLOCK) {
          throw std::runtime_error("endpoint " + endpoint + " belongs to a running deployment: " + path +
                                   " is locked by another zinfer launch" + holder +
                                   "; stop it first or give this one other endpoints");
        }
        throw std::runtime_error("cannot lock " + path + ": " + std::strerror(err));
      }
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // The pid is only for the message a second launch prints; the lock holds without it.
      }
      fds_.push_back(fd);
      paths_.push_back(path);
    }
  } catch (...) {
    for (int fd : fds_) ::close(fd);
    throw;
  }
}

DeploymentLock::~DeploymentLock() {
  // Closing the descriptors releases the locks; the files stay (removing a lock file that
  // another launch may be opening would let two launches hold "the" lock).
  for (int fd : fds_) ::close(fd);
}

}  // namespace zinfer::runtime
