#include "gpu/cpu/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace zinfer::gpu::cpu {
namespace {

// A 64-bit mixing function (the splitmix64 finaliser): each output bit depends on every input bit.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Indices of the `count` largest values, best first (ties: lower index first).
std::vector<int32_t> top_indices(const float* values, int32_t n, int32_t count) {
  std::vector<int32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  count = std::min(count, n);
  auto better = [values](int32_t a, int32_t b) { return values[a] > values[b] || (values[a] == values[b] && a < b); };
  std::partial_sort(idx.begin(), idx.begin() + count, idx.end(), better);
  idx.resize(count);
  return idx;
}

}  // namespace

double counter_uniform(uint64_t seed, uint64_t counter) {
  const uint64_t bits = mix64(mix64(seed + 0x9e3779b97f4a7c15ull) ^ (counter * 0xd1b54a32d192ed03ull + 1));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;  // 53 random bits
}

Sample sample_logits(const float* raw, int32_t vocab, const SamplingConfig& config, uint64_t unseeded_seed,
                     std::span<const int32_t> outputs, const uint32_t* mask) {
  if (vocab <= 0) throw std::invalid_argument("sample_logits: empty vocabulary");
  // log-softmax normaliser of the raw logits: what logprobs report.
  float raw_max = raw[0];
  int32_t raw_argmax = 0;
  for (int32_t i = 1; i < vocab; ++i)
    if (raw[i] > raw_max) raw_max = raw[i], raw_argmax = i;
  double sum = 0.0;
  for (int32_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(raw[i]) - raw_max);
  const double log_z = raw_max + std::log(sum);
  auto logprob = [&](int32_t i) { return static_cast<float>(raw[i] - log_z); };

  // The logits the token is drawn from: the raw ones, or a copy the rules changed.
  const bool greedy = config.temperature <= 0.0f || config.top_k == 1;
  std::vector<float> processed;
  const float* logits = raw;
  const SamplingRules* rules = config.rules.get();
  if (rules != nullptr || mask != nullptr) {
    processed.assign(raw, raw + vocab);
    // The mask first: -inf stays -inf through logit_bias and the penalties, so the order of the
    // two only matters for what reads the processed logits, and that comes after both.
    if (mask != nullptr) apply_token_mask(processed.data(), vocab, mask);
    if (rules != nullptr) apply_sampling_rules(processed.data(), vocab, *rules, outputs, config.sample_index);
    logits = processed.data();
  }
  float max_logit = -std::numeric_limits<float>::infinity();
  int32_t argmax = -1;
  for (int32_t i = 0; i < vocab; ++i)
    if (logits[i] > max_logit) max_logit = logits[i], argmax = i;
  if (argmax < 0) {
    // Every token masked (allowed_token_ids, bad words or a grammar mask leave none): the raw
    // argmax, as the CUDA sampler does.
    logits = raw;
    max_logit = raw_max;
    argmax = raw_argmax;
    processed.clear();
    rules = nullptr;
  }
  if (!greedy && rules != nullptr && rules->min_p > 0.0f) {
    // vLLM's min_p: keep p >= min_p * p_max over softmax(logits / T), i.e. a logit cut.
    const float cut = max_logit + config.temperature * std::log(rules->min_p);
    for (float& x : processed)
      if (x < cut) x = -std::numeric_limits<float>::infinity();
  }

  Sample out;
  if (greedy) {
    out.token = argmax;
  } else {
    if (config.top_p <= 0.0f || config.top_p > 1.0f)
      throw std::invalid_argument("top_p " + std::to_string(config.top_p) + " is outside (0, 1]");
    const double inv_t = 1.0 / config.temperature;
    // Candidates in descending order when top-k or top-p needs an order; else every token by index.
    std::vector<int32_t> cand;
    std::vector<double> prob;
    auto probs_of = [&](const std::vector<int32_t>& ids) {
      std::vector<double> p(ids.size());
      double total = 0.0;
      for (size_t j = 0; j < ids.size(); ++j) total += p[j] = std::exp((logits[ids[j]] - max_logit) * inv_t);
      for (double& x : p) x /= total;
      return p;
    };
    if (config.top_k > 0) {
      cand = top_indices(logits, vocab, config.top_k);
      prob = probs_of(cand);
    } else if (config.top_p < 1.0f) {
      // Probabilities over the full vocabulary; only the head is sorted, growing until it holds top_p.
      double total = 0.0;
      for (int32_t i = 0; i < vocab; ++i) total += std::exp((logits[i] - max_logit) * inv_t);
      for (int32_t count = std::min(vocab, 256);; count = std::min(vocab, count * 4)) {
        cand = top_indices(logits, vocab, count);
        double mass = 0.0;
        for (int32_t id : cand) mass += std::exp((logits[id] - max_logit) * inv_t) / total;
        if (mass >= config.top_p || count == vocab) break;
      }
      prob.resize(cand.size());
      for (size_t j = 0; j < cand.size(); ++j) prob[j] = std::exp((logits[cand[j]] - max_logit) * inv_t) / total;
    } else {
      cand.resize(vocab);
      std::iota(cand.begin(), cand.end(), 0);
      prob = probs_of(cand);
    }
    if (config.top_p < 1.0f) {
      // Keep the smallest head whose probability reaches top_p (at least one token).
      double cum = 0.0;
      size_t keep = 0;
      while (keep < cand.size() && cum < config.top_p) cum += prob[keep++];
      keep = std::max<size_t>(keep, 1);
      cand.resize(keep);
      prob.resize(keep);
      for (double& p : prob) p /= cum;
    }
    const uint64_t seed = config.seed >= 0 ? static_cast<uint64_t>(config.seed) : unseeded_seed;
    const double u = counter_uniform(seed, static_cast<uint64_t>(config.sample_index));
    double cum = 0.0;
    out.token = argmax;  // if rounding leaves u above the last cumulative sum: the last kept token
    for (size_t j = 0; j < cand.size(); ++j) {
      if (prob[j] <= 0.0) continue;  // masked (or top-k reaching past the unmasked tokens)
      out.token = cand[j];
      cum += prob[j];
      if (u < cum) break;
    }
  }
  out.logprob = logprob(out.token);
  if (config.top_logprobs > 0)
    for (int32_t id : top_indices(raw, vocab, config.top_logprobs)) out.top.emplace_back(id, logprob(id));
  return out;
}

}  // namespace zinfer::gpu::cpu
