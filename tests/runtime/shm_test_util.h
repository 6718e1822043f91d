// Helpers of the shm tests: a scratch folder for link files, and a blocking read that always
// goes through the eventcount's sleep path.
#pragma once

#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>

#include <poll.h>
#include <stdlib.h>

#include "runtime/shm_ring.h"

namespace zinfer::runtime::test {

// A fresh folder under the system temp dir, removed with everything in it.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "zinfer-shm-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
    path_ = pattern;
  }
  ~TempFolder() { std::filesystem::remove_all(path_); }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string endpoint(const std::string& name) const { return "shm://" + file(name); }
  size_t entries() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(path_), std::filesystem::directory_iterator()));
  }

 private:
  std::filesystem::path path_;
};

// Blocks until the reader has a whole message, sleeping in poll() on its wake fd after
// publishing "asleep" (never spinning), so every message goes through the eventcount. A lost
// wake-up shows as the 20 s poll running out (an exception), not as a hang.
inline std::string read_blocking(ShmRingReader& r) {
  for (;;) {
    if (auto m = r.try_read()) return *m;
    if (r.prepare_sleep()) {
      pollfd p{r.wake_fd(), POLLIN, 0};
      if (poll(&p, 1, 20000) == 0) throw std::runtime_error("lost wake-up: no message within 20 s");
    }
    r.after_sleep();
  }
}

}  // namespace zinfer::runtime::test
