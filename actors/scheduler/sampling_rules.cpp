#include "actors/scheduler/sampling_rules.h"

namespace zinfer::scheduler {

bool has_sampling_rules(const protocol::SamplingParams& s) {
  return s.repetition_penalty != 1.0f || s.frequency_penalty != 0.0f || s.presence_penalty != 0.0f ||
         s.min_p > 0.0f || !s.logit_bias.empty() || !s.allowed_token_ids.empty() || !s.bad_words_token_ids.empty() ||
         s.min_tokens > 0 || s.structured.has_value();
}

protocol::SamplingRules sampling_rules(const protocol::SamplingParams& s, std::span<const int32_t> prompt,
                                       std::span<const int32_t> outputs, std::span<const int32_t> eos_token_ids) {
  protocol::SamplingRules r;
  r.repetition_penalty = s.repetition_penalty;
  r.frequency_penalty = s.frequency_penalty;
  r.presence_penalty = s.presence_penalty;
  r.min_p = s.min_p;
  r.logit_bias = s.logit_bias;
  r.allowed_token_ids = s.allowed_token_ids;
  r.bad_words = s.bad_words_token_ids;
  r.min_tokens = s.min_tokens;
  if (s.min_tokens > 0) {
    r.min_tokens_stop_ids = s.stop_token_ids;
    if (!s.ignore_eos) r.min_tokens_stop_ids.insert(r.min_tokens_stop_ids.end(), eos_token_ids.begin(), eos_token_ids.end());
  }
  if (s.repetition_penalty != 1.0f) r.prompt_ids.assign(prompt.begin(), prompt.end());
  r.output_ids.assign(outputs.begin(), outputs.end());
  r.structured = s.structured;  // the executor's matcher replays output_ids first
  return r;
}

}  // namespace zinfer::scheduler
