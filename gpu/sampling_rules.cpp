#include "gpu/sampling_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace zinfer::gpu {
namespace {

void check_id(int32_t id, int32_t vocab, const char* field) {
  if (id < 0 || id >= vocab) {
    throw std::invalid_argument(std::string(field) + " has token id " + std::to_string(id) +
                                ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
  }
}

}  // namespace

void SamplingRules::validate(int32_t vocab) const {
  if (!(repetition_penalty > 0.0f) || !std::isfinite(repetition_penalty)) {
    throw std::invalid_argument("repetition_penalty must be a finite number > 0");
  }
  if (!std::isfinite(frequency_penalty)) throw std::invalid_argument("frequency_penalty must be finite");
  if (!std::isfinite(presence_penalty)) throw std::invalid_argument("presence_penalty must be finite");
  if (!(min_p >= 0.0f && min_p <= 1.0f)) throw std::invalid_argument("min_p must be in [0, 1]");
  if (min_tokens < 0) throw std::invalid_argument("min_tokens must not be negative");
  for (size_t i = 0; i < logit_bias.size(); ++i) {
    check_id(logit_bias[i].first, vocab, "logit_bias");
    if (!std::isfinite(logit_bias[i].second)) throw std::invalid_argument("logit_bias values must be finite");
    if (i > 0 && logit_bias[i - 1].first >= logit_bias[i].first) {
      throw std::invalid_argument("logit_bias must be sorted by token id without repeats");
    }
  }
  for (size_t i = 0; i < allowed_token_ids.size(); ++i) {
    check_id(allowed_token_ids[i], vocab, "allowed_token_ids");
    if (i > 0 && allowed_token_ids[i - 1] >= allowed_token_ids[i]) {
      throw std::invalid_argument("allowed_token_ids must be sorted without repeats");
    }
  }
  for (const auto& word : bad_words) {
    if (word.empty()) throw std::invalid_argument("bad_words has an empty token sequence");
    for (int32_t id : word) check_id(id, vocab, "bad_words");
  }
  for (int32_t id : min_tokens_stop_ids) check_id(id, vocab, "min_tokens' stop token ids");
  for (int32_t id : prompt_ids) check_id(id, vocab, "the prompt");
  for (int32_t id : output_ids) check_id(id, vocab, "the output");
}

std::vector<int32_t> banned_tokens(const SamplingRules& rules, std::span<const int32_t> outputs, int32_t sample_index) {
  std::vector<int32_t> banned;
  if (sample_index < rules.min_tokens) banned = rules.min_tokens_stop_ids;
  for (const auto& word : rules.bad_words) {
    const size_t prefix = word.size() - 1;
    if (prefix > outputs.size()) continue;
    if (std::equal(word.begin(), word.end() - 1, outputs.end() - static_cast<std::ptrdiff_t>(prefix))) {
      banned.push_back(word.back());
    }
  }
  return banned;
}

void apply_sampling_rules(float* logits, int32_t vocab, const SamplingRules& rules, std::span<const int32_t> outputs,
                          int32_t sample_index) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  if (!rules.allowed_token_ids.empty()) {
    std::vector<float> kept(rules.allowed_token_ids.size());
    for (size_t j = 0; j < kept.size(); ++j) kept[j] = logits[rules.allowed_token_ids[j]];
    std::fill(logits, logits + vocab, kMasked);
    for (size_t j = 0; j < kept.size(); ++j) logits[rules.allowed_token_ids[j]] = kept[j];
  }
  for (int32_t id : banned_tokens(rules, outputs, sample_index)) logits[id] = kMasked;
  for (const auto& [id, bias] : rules.logit_bias) logits[id] += bias;
  if (!rules.has_penalties()) return;
  // Output counts; the prompt's tokens count 0 but are marked as seen (repetition only).
  std::unordered_map<int32_t, int32_t> counts;
  for (int32_t id : rules.prompt_ids) counts.emplace(id, 0);
  for (int32_t id : outputs) ++counts[id];
  for (const auto& [id, count] : counts) {
    float x = logits[id];
    x = x > 0.0f ? x / rules.repetition_penalty : x * rules.repetition_penalty;
    x -= rules.frequency_penalty * static_cast<float>(count);
    if (count > 0) x -= rules.presence_penalty;
    logits[id] = x;
  }
}

SampledHistory::Entry& SampledHistory::track(uint64_t seq_id, const std::shared_ptr<const SamplingRules>& rules) {
  auto [it, added] = entries_.try_emplace(seq_id);
  if (added || it->second.rules != rules) {
    it->second.rules = rules;
    it->second.outputs = rules->output_ids;
  }
  return it->second;
}

SampledHistory::Entry* SampledHistory::find(uint64_t seq_id) {
  auto it = entries_.find(seq_id);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace zinfer::gpu
