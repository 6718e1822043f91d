// Serving metrics computed from recorded timestamps, with the definitions of vLLM's
// benchmark_serving so that numbers from both tools can be set side by side:
//   TTFT  = first text-carrying chunk - request sent
//   E2EL  = end of stream - request sent
//   TPOT  = (E2EL - TTFT) / (output_tokens - 1), only for requests with more than one token
//   ITL   = the gap before each chunk after the first; a chunk that carries k tokens contributes
//           ONE gap (its whole gap), as vLLM does; TPOT is the per-token figure.
// Throughputs divide by the benchmark's wall duration; failed requests count 0 output tokens.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zinfer::bench {

// What one request did, on the benchmark's clock (seconds since the benchmark started).
struct RequestRecord {
  size_t index = 0;              // position in the request list
  bool success = false;
  std::string error;             // why it failed (empty on success)
  int prompt_len = 0;            // tokens of the prompt as the dataset counted them
  int expected_output_len = 0;   // max_tokens asked for
  double send_time_s = 0.0;
  std::vector<double> chunk_times_s;  // arrival of each chunk that carried text
  // Arrival of every event of the choice, with or without text: a server that streams an event
  // per token (zinfer does; a token may add no text while it completes a UTF-8 character or is a
  // skipped special token) gives one per token here.
  std::vector<double> event_times_s;
  double end_time_s = 0.0;
  std::optional<int> usage_completion_tokens;  // from the server's usage, when it sent one
  std::optional<int> usage_prompt_tokens;
  std::optional<int> tokenizer_output_tokens;  // the generated text re-encoded by the tokenizer
  std::string generated_text;

  double ttft_s() const;        // 0 when no chunk arrived
  double latency_s() const { return end_time_s - send_time_s; }
  std::vector<double> itl_s() const;
  std::vector<double> event_gaps_s() const;  // the gap before each event after the first
  // usage's count when present, else the tokenizer's, else the number of chunks.
  int output_tokens() const;
};

// Summary statistics of one metric, in milliseconds. Percentiles interpolate linearly between
// the order statistics (numpy's default), std is the population standard deviation.
struct Distribution {
  size_t count = 0;
  double mean = 0, median = 0, std = 0, p90 = 0, p99 = 0;
  std::vector<double> sorted_ms;  // the values, for other percentiles
  double at(double p) const;      // percentile p of the values; 0 when there are none
};
Distribution distribution_ms(const std::vector<double>& seconds);
double percentile(std::vector<double> values, double p);  // p in [0, 100]; 0 for an empty list

// Service-level objectives for goodput (milliseconds); a request is "good" when it meets every
// one that is set.
struct GoodputSlo {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};
// Parses vLLM's `--goodput ttft:500 tpot:50 e2el:2000`; throws std::invalid_argument naming the
// bad item.
GoodputSlo parse_goodput(const std::vector<std::string>& items);

struct Summary {
  int completed = 0;
  int failed = 0;
  std::map<std::string, int> errors;  // error message -> how many requests failed with it
  double duration_s = 0;
  int64_t total_input = 0;
  int64_t total_output = 0;
  double request_throughput = 0;
  double request_goodput = 0;
  bool has_goodput = false;
  double input_throughput = 0;
  double output_throughput = 0;
  double total_token_throughput = 0;
  Distribution ttft, tpot, itl, e2el;
  Distribution event_gap;  // not one of vLLM's: the gaps between stream events, text or not
  int token_count_mismatches = 0;  // successes whose usage count differs from the tokenizer's
  int usage_missing = 0;           // successes for which the server sent no usage
};

Summary summarize(const std::vector<RequestRecord>& records, double duration_s, const GoodputSlo& slo);

}  // namespace zinfer::bench
