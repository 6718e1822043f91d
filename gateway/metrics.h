// The gateway's Prometheus metrics. Latency histograms (time to first token, time per output
// token, end to end) and token / request counters are measured here, from the deltas each
// request sees; queue sizes, KV usage, prefix hit rate and preemptions come from the pipeline's
// protocol::Stats at scrape time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/messages.h"

namespace zinfer::gateway {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // Appends the _bucket/_sum/_count lines; the caller holds the owning Metrics' lock.
  void render(std::string& out, const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; one more for +Inf
  double sum_ = 0.0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  void observe_ttft(double seconds);
  // A request ended. finish_reasons has one entry per sample ("stop", "length", "abort", ...).
  void observe_finished(double e2e_seconds, double tpot_seconds, bool has_tpot, int64_t prompt_tokens,
                        int64_t generation_tokens, const std::vector<std::string>& finish_reasons);
  // A request failed before or while running; code is the HTTP-style status it got.
  void observe_failure(int code);

  // The Prometheus text exposition (format 0.0.4).
  std::string render(const protocol::Stats& stats, int64_t in_flight) const;

 private:
  mutable std::mutex mu_;
  Histogram ttft_;
  Histogram tpot_;
  Histogram e2e_;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  std::map<std::string, int64_t> success_by_reason_;
  std::map<int, int64_t> failure_by_code_;
};

// Follows one request's deltas and reports it to Metrics once, when it ends.
class RequestTimer {
 public:
  RequestTimer(Metrics& metrics, int n);

  void on_delta(const protocol::TextDelta& delta);
  void finish();           // every sample finished (or the client aborted: reasons say "abort")
  void fail(int code);     // the request ended with an error

  int32_t prompt_tokens() const { return prompt_tokens_; }
  int32_t cached_tokens() const { return cached_tokens_; }

 private:
  using Clock = std::chrono::steady_clock;
  Metrics& metrics_;
  Clock::time_point start_;
  Clock::time_point first_token_{};
  bool saw_token_ = false;
  bool reported_ = false;
  int32_t prompt_tokens_ = 0;
  int32_t cached_tokens_ = 0;
  std::vector<int32_t> completion_tokens_;  // per sample
  std::vector<std::string> finish_reasons_;
};

}  // namespace zinfer::gateway
