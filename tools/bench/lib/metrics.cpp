#include "tools/bench/lib/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace zinfer::bench {

double RequestRecord::ttft_s() const {
  return chunk_times_s.empty() ? 0.0 : chunk_times_s.front() - send_time_s;
}

std::vector<double> RequestRecord::event_gaps_s() const {
  std::vector<double> gaps;
  for (size_t i = 1; i < event_times_s.size(); ++i) gaps.push_back(event_times_s[i] - event_times_s[i - 1]);
  return gaps;
}

std::vector<double> RequestRecord::itl_s() const {
  std::vector<double> gaps;
  for (size_t i = 1; i < chunk_times_s.size(); ++i) gaps.push_back(chunk_times_s[i] - chunk_times_s[i - 1]);
  return gaps;
}

int RequestRecord::output_tokens() const {
  if (usage_completion_tokens) return *usage_completion_tokens;
  if (tokenizer_output_tokens) return *tokenizer_output_tokens;
  return static_cast<int>(chunk_times_s.size());
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  // numpy "linear": rank = p/100 * (n-1), interpolate between its floor and ceiling.
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

double Distribution::at(double p) const { return percentile(sorted_ms, p); }

Distribution distribution_ms(const std::vector<double>& seconds) {
  Distribution d;
  d.count = seconds.size();
  if (seconds.empty()) return d;
  std::vector<double> ms(seconds.size());
  std::transform(seconds.begin(), seconds.end(), ms.begin(), [](double s) { return s * 1000.0; });
  d.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  double sq = 0;
  for (double v : ms) sq += (v - d.mean) * (v - d.mean);
  d.std = std::sqrt(sq / static_cast<double>(ms.size()));
  d.median = percentile(ms, 50);
  d.p90 = percentile(ms, 90);
  d.p99 = percentile(ms, 99);
  std::sort(ms.begin(), ms.end());
  d.sorted_ms = std::move(ms);
  return d;
}

GoodputSlo parse_goodput(const std::vector<std::string>& items) {
  GoodputSlo slo;
  for (const auto& item : items) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      throw std::invalid_argument("--goodput item '" + item + "' is not NAME:MILLISECONDS");
    }
    const std::string name = item.substr(0, colon);
    double value = 0;
    try {
      size_t used = 0;
      value = std::stod(item.substr(colon + 1), &used);
      if (used != item.size() - colon - 1) throw std::invalid_argument("trailing characters");
    } catch (const std::exception&) {
      throw std::invalid_argument("--goodput item '" + item + "': '" + item.substr(colon + 1) +
                                  "' is not a number of milliseconds");
    }
    if (value < 0) throw std::invalid_argument("--goodput item '" + item + "' is negative");
    if (name == "ttft") slo.ttft_ms = value;
    else if (name == "tpot") slo.tpot_ms = value;
    else if (name == "e2el") slo.e2el_ms = value;
    else throw std::invalid_argument("--goodput item '" + item + "': unknown metric '" + name +
                                     "' (expected ttft, tpot or e2el)");
  }
  return slo;
}

Summary summarize(const std::vector<RequestRecord>& records, double duration_s, const GoodputSlo& slo) {
  Summary s;
  s.duration_s = duration_s;
  std::vector<double> ttfts, tpots, itls, e2els, event_gaps;
  int good = 0;
  for (const auto& r : records) {
    if (!r.success) {
      ++s.failed;
      ++s.errors[r.error.empty() ? "unknown error" : r.error];
      continue;
    }
    ++s.completed;
    const int out = r.output_tokens();
    s.total_input += r.prompt_len;
    s.total_output += out;
    if (!r.usage_completion_tokens) ++s.usage_missing;
    if (r.usage_completion_tokens && r.tokenizer_output_tokens &&
        *r.usage_completion_tokens != *r.tokenizer_output_tokens) {
      ++s.token_count_mismatches;
    }
    const double ttft = r.ttft_s(), e2el = r.latency_s();
    // A one-token answer has no decode phase: vLLM leaves it out of TPOT but counts its TPOT as
    // 0 for goodput.
    double tpot = 0.0;
    if (out > 1) {
      tpot = (e2el - ttft) / (out - 1);
      tpots.push_back(tpot);
    }
    ttfts.push_back(ttft);
    e2els.push_back(e2el);
    for (double gap : r.itl_s()) itls.push_back(gap);
    for (double gap : r.event_gaps_s()) event_gaps.push_back(gap);
    const bool meets = (!slo.ttft_ms || ttft * 1000.0 <= *slo.ttft_ms) &&
                       (!slo.tpot_ms || tpot * 1000.0 <= *slo.tpot_ms) &&
                       (!slo.e2el_ms || e2el * 1000.0 <= *slo.e2el_ms);
    if (meets) ++good;
  }
  if (duration_s > 0) {
    s.request_throughput = s.completed / duration_s;
    s.input_throughput = static_cast<double>(s.total_input) / duration_s;
    s.output_throughput = static_cast<double>(s.total_output) / duration_s;
    s.total_token_throughput = static_cast<double>(s.total_input + s.total_output) / duration_s;
    if (slo.any()) s.request_goodput = good / duration_s;
  }
  s.has_goodput = slo.any();
  s.ttft = distribution_ms(ttfts);
  s.tpot = distribution_ms(tpots);
  s.itl = distribution_ms(itls);
  s.e2el = distribution_ms(e2els);
  s.event_gap = distribution_ms(event_gaps);
  return s;
}

}  // namespace zinfer::bench
