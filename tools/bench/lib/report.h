// The outputs of `zinfer-bench serve`: the summary table in the layout of vLLM's
// benchmark_serving (so the two can be set side by side, line by line), and the --save-result
// JSON with every per-request timing and the user's metadata.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/bench/lib/metrics.h"

namespace zinfer::bench {

// How the run was configured, as it appears in the table and the JSON.
struct RunInfo {
  std::string label;             // vLLM's --label: names the run (default: the backend)
  bool save_detailed = false;    // vLLM's --save-detailed: the per-request arrays go into the JSON
  std::string backend;
  std::string base_url;
  std::string endpoint;
  std::string model;
  std::string tokenizer;
  std::string dataset;
  int num_prompts = 0;
  double request_rate = 0;       // +inf = all at once
  double burstiness = 1.0;
  std::optional<int> max_concurrency;
  uint64_t seed = 0;
  int tensor_parallel_size = 1;  // the server's, as the user gives it (--tensor-parallel-size)
  std::string date;              // "YYYYMMDD-HHMMSS", UTC
  std::map<std::string, std::string> metadata;
  // What the table shows (vLLM's --percentile-metrics and --metric-percentiles).
  std::vector<std::string> percentile_metrics{"ttft", "tpot", "itl", "e2el"};
  std::vector<double> metric_percentiles{90, 99};
};

// Parse the comma-separated lists of --percentile-metrics ("ttft,tpot,itl,e2el") and
// --metric-percentiles ("50,90,99"); throw std::invalid_argument naming a bad item.
std::vector<std::string> parse_percentile_metrics(const std::string& list);
std::vector<double> parse_metric_percentiles(const std::string& list);

// The table; ends with a line of '='.
std::string format_summary(const Summary& s, const RunInfo& info);

// The --save-result document with vLLM's keys: the run's settings and metadata, the summary
// figures (ms), max_concurrent_requests and max_output_tokens_per_s (the peaks over the run); with
// info.save_detailed also the per-request arrays (input_lens, output_lens, ttfts, itls,
// latencies, start_times, errors, generated_texts) and zinfer's per-request records (requests).
nlohmann::json result_json(const Summary& s, const RunInfo& info, const std::vector<RequestRecord>& records);

// The most requests in flight at once (between send and end) during the run.
int max_concurrent_requests(const std::vector<RequestRecord>& records);
// The most stream events (tokens) of successful requests that arrived within one whole second.
double max_output_tokens_per_s(const std::vector<RequestRecord>& records);

// The file name vLLM would choose: BACKEND-RATEqps[-concurrencyN]-MODEL-DATE.json, with the
// model's last path component.
std::string default_result_filename(const RunInfo& info);

// Parses `key=value` items of --metadata; throws std::invalid_argument naming a bad item.
std::map<std::string, std::string> parse_metadata(const std::vector<std::string>& items);

}  // namespace zinfer::bench
