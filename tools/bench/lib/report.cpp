#include "tools/bench/lib/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace zinfer::bench {
namespace {

// Joins pieces by appending: gcc 12 warns falsely (-Wrestrict) on chains of std::string operator+.
std::string concat(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (auto piece : pieces) out.append(piece);
  return out;
}

// A title centred in a 50-character rule, the extra fill character going right (Python's '^').
std::string rule(const std::string& title, char fill) {
  const size_t width = 50;
  if (title.size() >= width) return title + "\n";
  const size_t pad = width - title.size();
  return std::string(pad / 2, fill) + title + std::string(pad - pad / 2, fill) + "\n";
}

// One "{:<40} {:<10}" row.
std::string row(const std::string& label, const std::string& value) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-40s %-10s\n", label.c_str(), value.c_str());
  return buf;
}

std::string fixed2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// "99" for 99, "99.9" for 99.9 (Python's str of the number, as vLLM labels its rows).
std::string percentile_word(double p) {
  char buf[32];
  if (p == std::floor(p)) {
    std::snprintf(buf, sizeof buf, "%d", static_cast<int>(p));
  } else {
    std::snprintf(buf, sizeof buf, "%g", p);
  }
  return buf;
}

void add_metric(std::string& out, const std::string& header, const std::string& name, const Distribution& d,
                const std::vector<double>& percentiles) {
  out += rule(header, '-');
  out += row(concat({"Mean ", name, " (ms):"}), fixed2(d.mean));
  out += row(concat({"Median ", name, " (ms):"}), fixed2(d.median));
  for (double p : percentiles) out += row(concat({"P", percentile_word(p), " ", name, " (ms):"}), fixed2(d.at(p)));
}

struct MetricView {
  const char* key;
  const char* header;
  const char* name;
  const Distribution Summary::*field;
};
constexpr MetricView kMetrics[] = {
    {"ttft", "Time to First Token", "TTFT", &Summary::ttft},
    {"tpot", "Time per Output Token (excl. 1st token)", "TPOT", &Summary::tpot},
    {"itl", "Inter-token Latency", "ITL", &Summary::itl},
    {"e2el", "End-to-end Latency", "E2EL", &Summary::e2el},
    {"event_gap", "Time between Stream Events", "Event Gap", &Summary::event_gap},
};

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    std::string item = list.substr(start, comma - start);
    if (!item.empty()) items.push_back(item);
    start = comma + 1;
  }
  return items;
}

nlohmann::json distribution_json(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"median", d.median},
          {"std", d.std},     {"p90", d.p90},   {"p99", d.p99}};
}

std::string rate_text(double rate) {
  if (std::isinf(rate)) return "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", rate);
  return buf;
}

}  // namespace

std::string format_summary(const Summary& s, const RunInfo& info) {
  std::string out = rule(" Serving Benchmark Result ", '=');
  out += row("Successful requests:", std::to_string(s.completed));
  out += row("Failed requests:", std::to_string(s.failed));
  if (info.max_concurrency) out += row("Maximum request concurrency:", std::to_string(*info.max_concurrency));
  if (info.tensor_parallel_size > 1) out += row("Tensor parallel size:", std::to_string(info.tensor_parallel_size));
  if (!std::isinf(info.request_rate)) out += row("Request rate configured (RPS):", fixed2(info.request_rate));
  out += row("Benchmark duration (s):", fixed2(s.duration_s));
  out += row("Total input tokens:", std::to_string(s.total_input));
  out += row("Total generated tokens:", std::to_string(s.total_output));
  out += row("Request throughput (req/s):", fixed2(s.request_throughput));
  if (s.has_goodput) out += row("Request goodput (req/s):", fixed2(s.request_goodput));
  out += row("Input token throughput (tok/s):", fixed2(s.input_throughput));
  out += row("Output token throughput (tok/s):", fixed2(s.output_throughput));
  out += row("Total Token throughput (tok/s):", fixed2(s.total_token_throughput));
  for (const auto& m : kMetrics) {
    if (std::find(info.percentile_metrics.begin(), info.percentile_metrics.end(), m.key) != info.percentile_metrics.end()) {
      add_metric(out, m.header, m.name, s.*m.field, info.metric_percentiles);
    }
  }
  if (s.token_count_mismatches > 0 || s.usage_missing > 0) {
    out += rule("Token counts", '-');
    out += row("Usage vs tokenizer mismatches:", std::to_string(s.token_count_mismatches));
    out += row("Responses without usage:", std::to_string(s.usage_missing));
  }
  if (!s.errors.empty()) {
    out += rule("Errors", '-');
    for (const auto& [message, count] : s.errors) out += concat({std::to_string(count), " x ", message, "\n"});
  }
  out += std::string(50, '=') + "\n";
  return out;
}

nlohmann::json result_json(const Summary& s, const RunInfo& info, const std::vector<RequestRecord>& records) {
  nlohmann::json j;
  j["date"] = info.date;
  j["label"] = info.label.empty() ? info.backend : info.label;
  j["endpoint_type"] = info.backend;
  j["backend"] = info.backend;
  j["base_url"] = info.base_url;
  j["endpoint"] = info.endpoint;
  j["model_id"] = info.model;
  j["tensor_parallel_size"] = info.tensor_parallel_size;
  j["tokenizer_id"] = info.tokenizer;
  j["dataset_name"] = info.dataset;
  j["num_prompts"] = info.num_prompts;
  j["request_rate"] = rate_text(info.request_rate);
  j["burstiness"] = info.burstiness;
  j["max_concurrency"] = info.max_concurrency ? nlohmann::json(*info.max_concurrency) : nlohmann::json();
  j["seed"] = info.seed;
  // vLLM writes metadata keys at the top level; keep them from overwriting the figures.
  for (const auto& [k, v] : info.metadata) {
    if (!j.contains(k)) j[k] = v;
  }
  j["metadata"] = info.metadata;

  j["duration"] = s.duration_s;
  j["completed"] = s.completed;
  j["failed"] = s.failed;
  j["total_input_tokens"] = s.total_input;
  j["total_output_tokens"] = s.total_output;
  j["request_throughput"] = s.request_throughput;
  j["request_goodput"] = s.has_goodput ? nlohmann::json(s.request_goodput) : nlohmann::json();
  j["input_throughput"] = s.input_throughput;
  j["output_throughput"] = s.output_throughput;
  j["total_token_throughput"] = s.total_token_throughput;
  j["token_count_mismatches"] = s.token_count_mismatches;
  j["usage_missing"] = s.usage_missing;
  j["error_counts"] = s.errors;
  for (const auto& m : kMetrics) {
    const std::string n = m.key;
    const Distribution& d = s.*m.field;
    j[concat({"mean_", n, "_ms"})] = d.mean;
    j[concat({"median_", n, "_ms"})] = d.median;
    j[concat({"std_", n, "_ms"})] = d.std;
    j[concat({"p90_", n, "_ms"})] = d.p90;
    j[concat({"p99_", n, "_ms"})] = d.p99;
    for (double p : info.metric_percentiles) j[concat({"p", percentile_word(p), "_", n, "_ms"})] = d.at(p);
    j[concat({n, "_ms"})] = distribution_json(d);
  }

  j["max_concurrent_requests"] = max_concurrent_requests(records);
  j["max_output_tokens_per_s"] = max_output_tokens_per_s(records);
  if (!info.save_detailed) return j;
  auto& per = j["requests"] = nlohmann::json::array();
  nlohmann::json input_lens = nlohmann::json::array(), output_lens = nlohmann::json::array(),
                 ttfts = nlohmann::json::array(), itls = nlohmann::json::array(),
                 errors = nlohmann::json::array(), texts = nlohmann::json::array(),
                 latencies = nlohmann::json::array(), start_times = nlohmann::json::array();
  for (const auto& r : records) {
    nlohmann::json q;
    q["index"] = r.index;
    q["success"] = r.success;
    q["error"] = r.error;
    q["prompt_len"] = r.prompt_len;
    q["max_tokens"] = r.expected_output_len;
    q["output_tokens"] = r.success ? r.output_tokens() : 0;
    q["usage_completion_tokens"] = r.usage_completion_tokens ? nlohmann::json(*r.usage_completion_tokens) : nlohmann::json();
    q["usage_prompt_tokens"] = r.usage_prompt_tokens ? nlohmann::json(*r.usage_prompt_tokens) : nlohmann::json();
    q["tokenizer_output_tokens"] = r.tokenizer_output_tokens ? nlohmann::json(*r.tokenizer_output_tokens) : nlohmann::json();
    q["send_time_s"] = r.send_time_s;
    q["end_time_s"] = r.end_time_s;
    q["chunk_times_s"] = r.chunk_times_s;
    q["ttft_s"] = r.ttft_s();
    q["e2el_s"] = r.latency_s();
    per.push_back(std::move(q));
    input_lens.push_back(r.prompt_len);
    output_lens.push_back(r.success ? r.output_tokens() : 0);
    ttfts.push_back(r.ttft_s());
    itls.push_back(r.itl_s());
    errors.push_back(r.error);
    texts.push_back(r.generated_text);
    latencies.push_back(r.latency_s());
    start_times.push_back(r.send_time_s);
  }
  // The flat arrays of vLLM's result file, for scripts written against it.
  j["input_lens"] = std::move(input_lens);
  j["output_lens"] = std::move(output_lens);
  j["ttfts"] = std::move(ttfts);
  j["itls"] = std::move(itls);
  j["errors"] = std::move(errors);
  j["generated_texts"] = std::move(texts);
  j["latencies"] = std::move(latencies);
  j["start_times"] = std::move(start_times);
  return j;
}

int max_concurrent_requests(const std::vector<RequestRecord>& records) {
  // +1 at each send, -1 at each end; ends sort before sends at the same instant.
  std::vector<std::pair<double, int>> events;
  for (const auto& r : records) {
    events.emplace_back(r.send_time_s, 1);
    events.emplace_back(r.end_time_s, -1);
  }
  std::sort(events.begin(), events.end());
  int now = 0, most = 0;
  for (const auto& [t, d] : events) most = std::max(most, now += d);
  return most;
}

double max_output_tokens_per_s(const std::vector<RequestRecord>& records) {
  // Tokens of every request by the whole second they arrived in (each event of a successful
  // request one token, as vLLM counts its token timestamps); the busiest second's count.
  std::map<int64_t, int64_t> per_second;
  for (const auto& r : records) {
    if (!r.success) continue;
    const auto& times = r.event_times_s.empty() ? r.chunk_times_s : r.event_times_s;
    for (double t : times) ++per_second[static_cast<int64_t>(std::floor(t))];
  }
  int64_t most = 0;
  for (const auto& [s, n] : per_second) most = std::max(most, n);
  return static_cast<double>(most);
}

std::string default_result_filename(const RunInfo& info) {
  std::string model = info.model;
  while (!model.empty() && model.back() == '/') model.pop_back();
  if (const auto slash = model.rfind('/'); slash != std::string::npos) model = model.substr(slash + 1);
  if (model.empty()) model = "model";
  // Appended piece by piece: gcc 12 warns falsely (-Wrestrict) on a chain of operator+ here.
  std::string name = info.label.empty() ? info.backend : info.label;
  name.append("-").append(rate_text(info.request_rate)).append("qps");
  if (info.max_concurrency) name.append("-concurrency").append(std::to_string(*info.max_concurrency));
  name.append("-").append(model).append("-").append(info.date).append(".json");
  return name;
}

std::vector<std::string> parse_percentile_metrics(const std::string& list) {
  std::vector<std::string> out = split_commas(list);
  for (const auto& item : out) {
    const bool known = std::any_of(std::begin(kMetrics), std::end(kMetrics), [&](const MetricView& m) { return item == m.key; });
    if (!known) throw std::invalid_argument("--percentile-metrics: unknown metric '" + item + "' (ttft, tpot, itl, e2el)");
  }
  return out;
}

std::vector<double> parse_metric_percentiles(const std::string& list) {
  std::vector<double> out;
  for (const auto& item : split_commas(list)) {
    double p = -1;
    try {
      size_t used = 0;
      p = std::stod(item, &used);
      if (used != item.size()) p = -1;
    } catch (const std::exception&) {
    }
    if (!(p > 0 && p < 100)) throw std::invalid_argument("--metric-percentiles: '" + item + "' is not a number in (0, 100)");
    out.push_back(p);
  }
  return out;
}

std::map<std::string, std::string> parse_metadata(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::invalid_argument("--metadata item '" + item + "' is not KEY=VALUE");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

}  // namespace zinfer::bench
