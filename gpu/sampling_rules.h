// What a request adds to temperature / top-k / top-p sampling (vLLM's sampling parameters of the
// same names), and each backend's record of the tokens a sequence generated, which penalties and
// bad words read. The order is vLLM's sampler's: the allowed_token_ids mask, bad words, the
// min_tokens mask of stop tokens, logit_bias, then the repetition / frequency / presence
// penalties; after them temperature, min_p, top-k and top-p. Reported logprobs stay those of the
// raw logits (vLLM's default, raw_logprobs).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace zinfer::gpu {

struct SamplingRules {
  float repetition_penalty = 1.0f;  // tokens of the prompt or the output: x > 0 ? x / p : x * p
  float frequency_penalty = 0.0f;   // x -= f * (times the token is in the output)
  float presence_penalty = 0.0f;    // x -= p * (the token is in the output)
  float min_p = 0.0f;               // keeps tokens with probability >= min_p * the largest
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to the logits; sorted by token, unique
  std::vector<int32_t> allowed_token_ids;             // sorted, unique; empty: every token
  std::vector<std::vector<int32_t>> bad_words;        // token sequences that may not be generated
  int32_t min_tokens = 0;
  std::vector<int32_t> min_tokens_stop_ids;  // masked while fewer than min_tokens tokens were generated
  std::vector<int32_t> prompt_ids;           // what repetition_penalty reads besides the output
  std::vector<int32_t> output_ids;           // tokens generated before the rules reached the backend

  bool has_penalties() const {
    return repetition_penalty != 1.0f || frequency_penalty != 0.0f || presence_penalty != 0.0f;
  }
  // Throws std::invalid_argument naming the field when a value is out of range or a token id
  // outside [0, vocab).
  void validate(int32_t vocab) const;
};

// The tokens masked at the next sample of a sequence that generated `outputs` (sample_index of
// them): min_tokens' stop ids while sample_index < min_tokens, and the last token of every bad
// word whose other tokens end the output (a one-token bad word always).
std::vector<int32_t> banned_tokens(const SamplingRules& rules, std::span<const int32_t> outputs, int32_t sample_index);

// Applies the rules (not min_p, which depends on the temperature) to one row of logits in place.
void apply_sampling_rules(float* logits, int32_t vocab, const SamplingRules& rules, std::span<const int32_t> outputs,
                          int32_t sample_index);

// A backend's record of the sequences that sample under rules: the rules and the tokens sampled
// so far (starting from rules.output_ids). Entries go when the sequence is reported finished.
class SampledHistory {
 public:
  struct Entry {
    std::shared_ptr<const SamplingRules> rules;
    std::vector<int32_t> outputs;
  };
  // The sequence's entry; created (from rules->output_ids) the first time, or when the rules changed.
  Entry& track(uint64_t seq_id, const std::shared_ptr<const SamplingRules>& rules);
  Entry* find(uint64_t seq_id);
  void drop(uint64_t seq_id) { entries_.erase(seq_id); }
  size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<uint64_t, Entry> entries_;
};

}  // namespace zinfer::gpu
