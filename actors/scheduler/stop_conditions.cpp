#include "actors/scheduler/stop_conditions.h"

#include <algorithm>

namespace zinfer::scheduler {

std::string finish_reason_after(int32_t token, int32_t num_outputs, int32_t seq_len,
                                const protocol::SamplingParams& sampling,
                                std::span<const int32_t> eos_token_ids, int32_t max_model_len) {
  auto contains = [token](auto&& ids) { return std::find(ids.begin(), ids.end(), token) != ids.end(); };
  if (num_outputs >= sampling.min_tokens) {
    if (!sampling.ignore_eos && contains(eos_token_ids)) return "stop";
    if (contains(sampling.stop_token_ids)) return "stop";
  }
  if (num_outputs >= sampling.max_tokens) return "length";
  if (seq_len >= max_model_len) return "length";
  return "";
}

}  // namespace zinfer::scheduler
