#include "runtime/private_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace zinfer::runtime {

namespace {

std::string created_dir;  // the one this process made, removed at exit when empty

void remove_created_dir() {
  if (!created_dir.empty()) ::rmdir(created_dir.c_str());  // fails harmlessly while files remain
}

}  // namespace

void check_private_dir(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    throw std::runtime_error("the runtime directory " + path + " (" + kRuntimeDirVariable +
                             ") cannot be used: " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) {
    throw std::runtime_error("the runtime directory " + path + " (" + kRuntimeDirVariable +
                             ") is a symbolic link: refused (another user may have planted it)");
  }
  if (!S_ISDIR(st.st_mode)) {
    throw std::runtime_error("the runtime directory " + path + " (" + kRuntimeDirVariable + ") is not a directory");
  }
  if (st.st_uid != ::geteuid()) {
    throw std::runtime_error("the runtime directory " + path + " (" + kRuntimeDirVariable +
                             ") belongs to another user: refused");
  }
  if ((st.st_mode & 077) != 0) {
    throw std::runtime_error("the runtime directory " + path + " (" + kRuntimeDirVariable +
                             ") may be entered by others (mode must be 0700): refused");
  }
}

std::string private_runtime_dir() {
  static std::mutex mu;
  std::lock_guard lock(mu);
  if (const char* given = std::getenv(kRuntimeDirVariable); given != nullptr && *given != '\0') {
    check_private_dir(given);
    return given;
  }
  std::string base = "/tmp";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && xdg[0] == '/') {
    struct stat st {};
    if (::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode)) base = xdg;
  }
  std::string pattern = base + "/zinfer-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a private runtime directory under " + base + ": " + std::strerror(errno));
  }
  // mkdtemp made it 0700 and ours; the actors this process starts inherit the variable.
  ::setenv(kRuntimeDirVariable, pattern.c_str(), 1);
  if (created_dir.empty()) std::atexit(remove_created_dir);
  created_dir = pattern;
  return pattern;
}

std::string expand_runtime_dir(const std::string& endpoint) {
  const auto at = endpoint.find(kRuntimeDirPlaceholder);
  if (at == std::string::npos) return endpoint;
  std::string out = endpoint;
  out.replace(at, std::strlen(kRuntimeDirPlaceholder), private_runtime_dir());
  return out;
}

}  // namespace zinfer::runtime
