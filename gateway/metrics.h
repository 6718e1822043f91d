// The gateway's Prometheus metrics. Latency histograms (time to first token, time per output
// token, end to end) and token / request counters are measured here, from the deltas each
// request sees; queue sizes, KV usage, prefix hit rate and preemptions come from the pipeline's
// protocol::Stats at scrape time. Besides zinfer's names, /metrics carries the request-level
// metrics of vLLM's names (vllm:..., labelled model_name) that vLLM's dashboards read; the
// mapping is in docs/metrics.md.
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
  // Appends the _bucket/_sum/_count lines, with `labels` (`k="v",...`) when given; the caller
  // holds the owning Metrics' lock.
  void render(std::string& out, const std::string& name, const std::string& labels = "") const;

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
  // The gap before a generated token after the first of its sample (vLLM's inter-token latency).
  void observe_inter_token(double seconds, int tokens);
  // A request ended. finish_reasons has one entry per sample ("stop", "length", "abort", ...).
  void observe_finished(double e2e_seconds, double tpot_seconds, bool has_tpot, int64_t prompt_tokens,
                        int64_t generation_tokens, const std::vector<std::string>& finish_reasons);
  // The phases of a request that ended, when the scheduler said when it was first scheduled:
  // queue (arrival to scheduled), prefill (scheduled to first token), decode (first to last token),
  // inference (scheduled to last token). Negative values (no token) are not observed.
  void observe_phases(double queue_s, double prefill_s, double decode_s, double inference_s);
  // A request failed before or while running; code is the HTTP-style status it got.
  void observe_failure(int code);

  // The Prometheus text exposition (format 0.0.4); model_name labels the vllm: metrics.
  std::string render(const protocol::Stats& stats, int64_t in_flight, const std::string& model_name = "") const;

 private:
  mutable std::mutex mu_;
  Histogram ttft_;
  Histogram tpot_;
  Histogram e2e_;
  Histogram inter_token_;
  Histogram queue_, prefill_, decode_, inference_;
  Histogram request_prompt_tokens_, request_generation_tokens_;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  std::map<std::string, int64_t> success_by_reason_;
  std::map<int, int64_t> failure_by_code_;
};

// Follows one request's deltas and reports it to Metrics once, when it ends.
class RequestTimer {
 public:
  // arrival_ns: the request's arrival on the steady clock (GenerateRequest::arrival_ns); 0 = now.
  RequestTimer(Metrics& metrics, int n, int64_t arrival_ns = 0);

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
  Clock::time_point scheduled_{};
  bool scheduled_known_ = false;
  std::vector<Clock::time_point> last_token_;  // per sample
  bool saw_token_ = false;
  bool reported_ = false;
  int32_t prompt_tokens_ = 0;
  int32_t cached_tokens_ = 0;
  std::vector<int32_t> completion_tokens_;  // per sample
  std::vector<std::string> finish_reasons_;
};

}  // namespace zinfer::gateway
