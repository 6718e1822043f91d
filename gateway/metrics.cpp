#include "gateway/metrics.h"

#include <algorithm>
#include <cstdio>

namespace zinfer::gateway {
namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const std::string& name, double value) {
  out += name + ' ' + number(value) + '\n';
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + '\n';
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + '\n';
  out += name + "_sum " + number(sum_) + '\n';
  out += name + "_count " + std::to_string(count_) + '\n';
}

Metrics::Metrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      tpot_({0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0}),
      e2e_({0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 300.0}) {}

void Metrics::observe_ttft(double seconds) {
  std::lock_guard lock(mu_);
  ttft_.observe(seconds);
}

void Metrics::observe_finished(double e2e_seconds, double tpot_seconds, bool has_tpot, int64_t prompt_tokens,
                               int64_t generation_tokens, const std::vector<std::string>& finish_reasons) {
  std::lock_guard lock(mu_);
  e2e_.observe(e2e_seconds);
  if (has_tpot) tpot_.observe(tpot_seconds);
  prompt_tokens_ += prompt_tokens;
  generation_tokens_ += generation_tokens;
  for (const auto& r : finish_reasons) ++success_by_reason_[r.empty() ? "unknown" : r];
}

void Metrics::observe_failure(int code) {
  std::lock_guard lock(mu_);
  ++failure_by_code_[code];
}

std::string Metrics::render(const protocol::Stats& stats, int64_t in_flight) const {
  std::string out;
  out.reserve(8192);
  header(out, "zinfer_num_requests_running", "gauge", "Requests in the running batch.");
  sample(out, "zinfer_num_requests_running", stats.running);
  header(out, "zinfer_num_requests_waiting", "gauge", "Requests waiting to be scheduled.");
  sample(out, "zinfer_num_requests_waiting", stats.waiting);
  header(out, "zinfer_num_requests_swapped", "gauge", "Requests preempted to host memory.");
  sample(out, "zinfer_num_requests_swapped", stats.swapped);
  header(out, "zinfer_gateway_requests_in_flight", "gauge", "Requests accepted by the gateway and not yet finished.");
  sample(out, "zinfer_gateway_requests_in_flight", static_cast<double>(in_flight));
  header(out, "zinfer_kv_cache_usage_ratio", "gauge", "Fraction of device KV blocks in use.");
  sample(out, "zinfer_kv_cache_usage_ratio", stats.kv_usage);
  header(out, "zinfer_prefix_cache_hit_rate", "gauge", "Prompt tokens served from the prefix cache / prompt tokens looked up.");
  sample(out, "zinfer_prefix_cache_hit_rate", stats.prefix_hit_rate);
  header(out, "zinfer_num_preemptions_total", "counter", "Sequences preempted since start.");
  sample(out, "zinfer_num_preemptions_total", static_cast<double>(stats.num_preemptions));
  header(out, "zinfer_gpu_blocks", "gauge", "Device KV blocks in the pool.");
  sample(out, "zinfer_gpu_blocks", stats.num_gpu_blocks);
  header(out, "zinfer_gpu_blocks_free", "gauge", "Device KV blocks free.");
  sample(out, "zinfer_gpu_blocks_free", stats.free_gpu_blocks);

  std::lock_guard lock(mu_);
  header(out, "zinfer_prompt_tokens_total", "counter", "Prompt tokens of finished requests.");
  sample(out, "zinfer_prompt_tokens_total", static_cast<double>(prompt_tokens_));
  header(out, "zinfer_generation_tokens_total", "counter", "Generated tokens of finished requests.");
  sample(out, "zinfer_generation_tokens_total", static_cast<double>(generation_tokens_));
  header(out, "zinfer_request_success_total", "counter", "Finished samples by finish reason.");
  for (const auto& [reason, count] : success_by_reason_) {
    sample(out, "zinfer_request_success_total{finished_reason=\"" + reason + "\"}", static_cast<double>(count));
  }
  header(out, "zinfer_request_failure_total", "counter", "Requests that ended with an error, by status code.");
  for (const auto& [code, count] : failure_by_code_) {
    sample(out, "zinfer_request_failure_total{code=\"" + std::to_string(code) + "\"}", static_cast<double>(count));
  }
  header(out, "zinfer_time_to_first_token_seconds", "histogram", "Time from arrival to the first generated token.");
  ttft_.render(out, "zinfer_time_to_first_token_seconds");
  header(out, "zinfer_time_per_output_token_seconds", "histogram", "Mean time between generated tokens of a request.");
  tpot_.render(out, "zinfer_time_per_output_token_seconds");
  header(out, "zinfer_e2e_request_latency_seconds", "histogram", "Time from arrival to the last token.");
  e2e_.render(out, "zinfer_e2e_request_latency_seconds");
  return out;
}

RequestTimer::RequestTimer(Metrics& metrics, int n)
    : metrics_(metrics), start_(Clock::now()), completion_tokens_(std::max(n, 1), 0), finish_reasons_(std::max(n, 1)) {}

void RequestTimer::on_delta(const protocol::TextDelta& d) {
  prompt_tokens_ = std::max(prompt_tokens_, d.prompt_tokens);
  cached_tokens_ = std::max(cached_tokens_, d.cached_tokens);
  if (d.index >= 0 && static_cast<size_t>(d.index) < completion_tokens_.size()) {
    auto& c = completion_tokens_[d.index];
    c = std::max<int32_t>(c + static_cast<int32_t>(d.token_ids.size()), d.completion_tokens);
    if (!d.finish_reason.empty()) finish_reasons_[d.index] = d.finish_reason;
  }
  if (!saw_token_ && (!d.token_ids.empty() || !d.text.empty())) {
    saw_token_ = true;
    first_token_ = Clock::now();
    metrics_.observe_ttft(std::chrono::duration<double>(first_token_ - start_).count());
  }
}

void RequestTimer::finish() {
  if (reported_) return;
  reported_ = true;
  auto end = Clock::now();
  double e2e = std::chrono::duration<double>(end - start_).count();
  int64_t generated = 0;
  int32_t longest = 0;
  for (int32_t c : completion_tokens_) {
    generated += c;
    longest = std::max(longest, c);
  }
  // Samples run in lock step, so the longest one sets the pace of the request.
  bool has_tpot = saw_token_ && longest > 1;
  double tpot = has_tpot ? std::chrono::duration<double>(end - first_token_).count() / (longest - 1) : 0.0;
  std::vector<std::string> reasons = finish_reasons_;
  for (auto& r : reasons) {
    if (r.empty()) r = "abort";  // a sample that never finished was cut short by the client
  }
  metrics_.observe_finished(e2e, tpot, has_tpot, prompt_tokens_, generated, reasons);
}

void RequestTimer::fail(int code) {
  if (reported_) return;
  reported_ = true;
  metrics_.observe_failure(code);
}

}  // namespace zinfer::gateway
