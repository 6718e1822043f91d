// A float64 reference of vLLM's (V1) sampler on one row of logits, written from its definitions,
// for the CPU and CUDA sampler tests:
//   allowed_token_ids: every other token -inf;  bad words: the last token of a bad word whose
//   other tokens end the output -inf;  min_tokens: stop ids -inf while fewer outputs exist;
//   logit_bias: added;  repetition_penalty p on tokens of prompt or output: x > 0 ? x / p : x * p;
//   frequency_penalty f: x -= f * count in the output;  presence_penalty r: x -= r if in the output;
// then the distribution: softmax(x / T), min_p (p < min_p * p_max dropped), top-k (values below
// the k-th largest dropped), top-p (the smallest head holding top_p of the mass), renormalised.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "gpu/sampling_rules.h"

namespace zinfer::gpu::reference {

inline std::vector<double> processed_logits(const std::vector<float>& raw, const SamplingRules& r,
                                            const std::vector<int32_t>& outputs, int sample_index) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x(raw.begin(), raw.end());
  const int V = static_cast<int>(raw.size());
  if (!r.allowed_token_ids.empty()) {
    const std::set<int32_t> allowed(r.allowed_token_ids.begin(), r.allowed_token_ids.end());
    for (int i = 0; i < V; ++i)
      if (!allowed.count(i)) x[i] = -inf;
  }
  for (const auto& word : r.bad_words) {
    const size_t prefix = word.size() - 1;
    if (prefix > outputs.size()) continue;
    bool match = true;
    for (size_t j = 0; j < prefix; ++j) match &= outputs[outputs.size() - prefix + j] == word[j];
    if (match) x[word.back()] = -inf;
  }
  if (sample_index < r.min_tokens)
    for (int32_t id : r.min_tokens_stop_ids) x[id] = -inf;
  for (const auto& [id, b] : r.logit_bias) x[id] += b;
  std::map<int32_t, int> count;
  for (int32_t id : outputs) ++count[id];
  std::set<int32_t> seen(r.prompt_ids.begin(), r.prompt_ids.end());
  seen.insert(outputs.begin(), outputs.end());
  for (int i = 0; i < V; ++i) {
    if (seen.count(i)) x[i] = x[i] > 0 ? x[i] / r.repetition_penalty : x[i] * r.repetition_penalty;
    const int c = count.count(i) ? count[i] : 0;
    x[i] -= r.frequency_penalty * c;
    if (c > 0) x[i] -= r.presence_penalty;
  }
  return x;
}

inline std::vector<double> probabilities(const std::vector<double>& x, double temperature, double min_p, int top_k,
                                         double top_p) {
  const int V = static_cast<int>(x.size());
  const double mx = *std::max_element(x.begin(), x.end());
  std::vector<double> p(V);
  double z = 0;
  for (int i = 0; i < V; ++i) z += p[i] = std::exp((x[i] - mx) / temperature);
  for (double& v : p) v /= z;
  const double p_max = *std::max_element(p.begin(), p.end());
  for (double& v : p)
    if (v < min_p * p_max) v = 0;
  if (top_k > 0 && top_k < V) {
    std::vector<double> sorted = p;
    std::sort(sorted.rbegin(), sorted.rend());
    const double kth = sorted[top_k - 1];
    for (double& v : p)
      if (v < kth) v = 0;
  }
  z = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& v : p) v /= z;
  if (top_p < 1.0) {
    std::vector<int> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
    double cum = 0;
    size_t keep = 0;
    while (keep < order.size() && cum < top_p) cum += p[order[keep++]];
    for (size_t j = keep; j < order.size(); ++j) p[order[j]] = 0;
    for (double& v : p) v /= cum;
  }
  return p;
}

// Rules that exercise every processing step on a vocabulary of `vocab` (>= 64) tokens.
inline SamplingRules every_rule(int vocab) {
  SamplingRules r;
  r.repetition_penalty = 1.3f;
  r.frequency_penalty = 0.4f;
  r.presence_penalty = 0.7f;
  r.logit_bias = {{2, 3.0f}, {5, -100.0f}, {11, 1.5f}, {vocab - 1, 2.0f}};
  r.bad_words = {{7}, {20, 21}, {30, 31}, {40, 41, 42}};
  r.min_tokens = 3;
  r.min_tokens_stop_ids = {1, 9};
  r.prompt_ids = {3, 4, 4, 11, 12, vocab - 2};
  r.output_ids = {12, 13, 13, 20};  // ends with 20: bans 21 (not 31, not 42)
  return r;
}

}  // namespace zinfer::gpu::reference
