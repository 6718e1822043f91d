#include "gateway/metrics.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

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

// Prometheus label values escape backslash, quote and newline.
std::string label_value(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

const std::vector<double> kLatencyBuckets = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
                                             40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> kTokenCountBuckets = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
                                                10000, 20000, 50000, 100000};

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string prefix = labels.empty() ? std::string() : labels + ",";
  const std::string own = labels.empty() ? std::string() : "{" + labels + "}";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{" + prefix + "le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + '\n';
  }
  out += name + "_bucket{" + prefix + "le=\"+Inf\"} " + std::to_string(count_) + '\n';
  out += name + "_sum" + own + " " + number(sum_) + '\n';
  out += name + "_count" + own + " " + std::to_string(count_) + '\n';
}

Metrics::Metrics()
    : ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      tpot_({0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0}),
      e2e_({0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 300.0}),
      inter_token_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                    40.0, 80.0}),
      queue_(kLatencyBuckets),
      prefill_(kLatencyBuckets),
      decode_(kLatencyBuckets),
      inference_(kLatencyBuckets),
      request_prompt_tokens_(kTokenCountBuckets),
      request_generation_tokens_(kTokenCountBuckets) {}

void Metrics::observe_inter_token(double seconds, int tokens) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < tokens; ++i) inter_token_.observe(seconds / tokens);
}

void Metrics::observe_phases(double queue_s, double prefill_s, double decode_s, double inference_s) {
  std::lock_guard lock(mu_);
  if (queue_s >= 0) queue_.observe(queue_s);
  if (prefill_s >= 0) prefill_.observe(prefill_s);
  if (decode_s >= 0) decode_.observe(decode_s);
  if (inference_s >= 0) inference_.observe(inference_s);
}

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
  request_prompt_tokens_.observe(static_cast<double>(prompt_tokens));
  request_generation_tokens_.observe(static_cast<double>(generation_tokens));
  for (const auto& r : finish_reasons) ++success_by_reason_[r.empty() ? "unknown" : r];
}

void Metrics::observe_failure(int code) {
  std::lock_guard lock(mu_);
  ++failure_by_code_[code];
}

std::string Metrics::render(const protocol::Stats& stats, int64_t in_flight, const std::string& model_name) const {
  std::string out;
  out.reserve(8192);
  header(out, "zinfer_num_requests_running", "gauge", "Requests in the running batch.");
  sample(out, "zinfer_num_requests_running", stats.running);
  header(out, "zinfer_num_requests_waiting", "gauge", "Requests waiting to be scheduled.");
  sample(out, "zinfer_num_requests_waiting", stats.waiting);
  header(out, "zinfer_num_requests_swapped", "gauge", "Sequences (samples of requests) preempted to host memory.");
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

  // vLLM's names (docs/metrics.md maps them), labelled with the served model's name.
  const std::string label = "model_name=\"" + label_value(model_name) + "\"";
  auto gauge = [&](const char* name, const char* help, double value) {
    header(out, name, "gauge", help);
    sample(out, std::string(name) + "{" + label + "}", value);
  };
  auto counter = [&](const char* name, const char* help, double value) {
    header(out, name, "counter", help);
    sample(out, std::string(name) + "{" + label + "}", value);
  };
  auto histogram = [&](const char* name, const char* help, const Histogram& h) {
    header(out, name, "histogram", help);
    h.render(out, name, label);
  };
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.", stats.running);
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", stats.waiting);
  gauge("vllm:num_requests_swapped", "Number of sequences swapped to CPU (zinfer counts each sample of a request).", stats.swapped);
  gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", stats.kv_usage);
  gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", stats.kv_usage);
  gauge("vllm:gpu_prefix_cache_hit_rate", "GPU prefix cache block hit rate.", stats.prefix_hit_rate);
  counter("vllm:num_preemptions_total", "Cumulative number of preemptions from the engine.",
          static_cast<double>(stats.num_preemptions));
  counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", static_cast<double>(stats.prompt_tokens));
  counter("vllm:generation_tokens_total", "Number of generation tokens processed.",
          static_cast<double>(stats.generation_tokens));
  header(out, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const auto& [reason, count] : success_by_reason_) {
    sample(out, "vllm:request_success_total{" + label + ",finished_reason=\"" + label_value(reason) + "\"}",
           static_cast<double>(count));
  }
  {
    // Tokens per step, from the scheduler's counts (protocol::kIterationTokenBuckets).
    header(out, "vllm:iteration_tokens_total", "histogram", "Histogram of number of tokens per engine_step.");
    uint64_t cumulative = 0;
    const auto& bounds = protocol::kIterationTokenBuckets;
    for (size_t i = 0; i < std::size(bounds); ++i) {
      cumulative += i < stats.iteration_tokens.size() ? static_cast<uint64_t>(stats.iteration_tokens[i]) : 0;
      out += "vllm:iteration_tokens_total_bucket{" + label + ",le=\"" + number(static_cast<double>(bounds[i])) +
             "\"} " + std::to_string(cumulative) + '\n';
    }
    if (stats.iteration_tokens.size() > std::size(bounds)) cumulative += static_cast<uint64_t>(stats.iteration_tokens.back());
    out += "vllm:iteration_tokens_total_bucket{" + label + ",le=\"+Inf\"} " + std::to_string(cumulative) + '\n';
    out += "vllm:iteration_tokens_total_sum{" + label + "} " + number(static_cast<double>(stats.iteration_tokens_sum)) + '\n';
    out += "vllm:iteration_tokens_total_count{" + label + "} " + std::to_string(cumulative) + '\n';
  }
  histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttft_);
  histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", inter_token_);
  histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", inter_token_);
  histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.",
            tpot_);
  histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e2e_);
  histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", queue_);
  histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", prefill_);
  histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", decode_);
  histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", inference_);
  histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", request_prompt_tokens_);
  histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", request_generation_tokens_);
  return out;
}

RequestTimer::RequestTimer(Metrics& metrics, int n, int64_t arrival_ns)
    : metrics_(metrics),
      start_(arrival_ns > 0 ? Clock::time_point(std::chrono::nanoseconds(arrival_ns)) : Clock::now()),
      last_token_(std::max(n, 1)),
      completion_tokens_(std::max(n, 1), 0),
      finish_reasons_(std::max(n, 1)) {}

void RequestTimer::on_delta(const protocol::TextDelta& d) {
  prompt_tokens_ = std::max(prompt_tokens_, d.prompt_tokens);
  cached_tokens_ = std::max(cached_tokens_, d.cached_tokens);
  if (d.index >= 0 && static_cast<size_t>(d.index) < completion_tokens_.size()) {
    auto& c = completion_tokens_[d.index];
    c = std::max<int32_t>(c + static_cast<int32_t>(d.token_ids.size()), d.completion_tokens);
    if (!d.finish_reason.empty()) finish_reasons_[d.index] = d.finish_reason;
  }
  const auto now = Clock::now();
  if (d.scheduled_ns > 0 && !scheduled_known_) {
    scheduled_known_ = true;
    scheduled_ = Clock::time_point(std::chrono::nanoseconds(d.scheduled_ns));
  }
  if (!saw_token_ && (!d.token_ids.empty() || !d.text.empty())) {
    saw_token_ = true;
    first_token_ = now;
    metrics_.observe_ttft(std::chrono::duration<double>(first_token_ - start_).count());
  }
  if (d.index >= 0 && static_cast<size_t>(d.index) < last_token_.size() && !d.token_ids.empty()) {
    auto& last = last_token_[d.index];
    if (last != Clock::time_point{}) {
      metrics_.observe_inter_token(std::chrono::duration<double>(now - last).count(), static_cast<int>(d.token_ids.size()));
    }
    last = now;
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
  if (scheduled_known_) {
    auto secs = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    metrics_.observe_phases(secs(scheduled_ - start_), saw_token_ ? secs(first_token_ - scheduled_) : -1.0,
                            saw_token_ ? secs(end - first_token_) : -1.0, secs(end - scheduled_));
  }
}

void RequestTimer::fail(int code) {
  if (reported_) return;
  reported_ = true;
  metrics_.observe_failure(code);
}

}  // namespace zinfer::gateway
