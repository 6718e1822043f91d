// What `zinfer-bench serve` needs from a server: send one generation request and, when it ends,
// get back its RequestRecord (times of every text-carrying chunk, usage, text, or an error). The
// OpenAI (HTTP + SSE) and zinfer ZeroMQ backends implement it; each runs its own I/O threads and
// calls `done` from one of them.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "tools/bench/lib/metrics.h"

namespace zinfer::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point origin) {
  return std::chrono::duration<double>(Clock::now() - origin).count();
}

struct BackendRequest {
  size_t index = 0;
  std::string model;
  std::string prompt;
  int prompt_len = 0;
  int max_tokens = 16;
  bool ignore_eos = false;
  Clock::time_point origin;  // the benchmark's time zero; records are in seconds since it
};

using Completion = std::function<void(RequestRecord)>;

class Backend {
 public:
  virtual ~Backend() = default;
  // Thread-safe; returns at once. `done` is called exactly once, from a backend thread.
  virtual void submit(BackendRequest request, Completion done) = 0;
};

}  // namespace zinfer::bench
