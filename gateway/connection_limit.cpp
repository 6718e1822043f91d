#include "gateway/connection_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace zinfer::gateway {

int64_t raise_descriptor_limit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return 1024;
  if (files.rlim_cur < files.rlim_max) {
    rlimit wanted = files;
    wanted.rlim_cur = files.rlim_max;
    // Some kernels cap it lower than an infinite hard limit (fs.nr_open): keep what we had then.
    if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) files = wanted;
  }
  if (files.rlim_cur == RLIM_INFINITY) return int64_t(1) << 30;
  return static_cast<int64_t>(files.rlim_cur);
}

int64_t default_max_connections(int64_t descriptor_limit) {
  const int64_t headroom = std::max<int64_t>(64, descriptor_limit / 10);
  return std::max<int64_t>(1, descriptor_limit - headroom);
}

std::chrono::milliseconds accept_backoff(int failures) {
  const int shift = std::clamp(failures - 1, 0, 7);
  return std::chrono::milliseconds(std::min(1000, 10 << shift));
}

}  // namespace zinfer::gateway
