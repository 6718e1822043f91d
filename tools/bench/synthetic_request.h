// The requests of `zinfer-bench scheduler`: distinct prompts (no prefix-cache hits flatter the
// figures), greedy, ignore_eos, so that each runs exactly max_tokens steps.
#pragma once

#include <cstdint>

#include "protocol/messages.h"

namespace zinfer::bench {

inline protocol::TokenizedRequest synthetic_request(uint64_t id, int prompt_len, int max_tokens) {
  protocol::TokenizedRequest r;
  r.request_id = id;
  for (int i = 0; i < prompt_len; ++i) {
    r.prompt_ids.push_back(static_cast<int32_t>((id * 7919 + static_cast<uint64_t>(i) * 104729) % 30000 + 5));
  }
  r.sampling.max_tokens = max_tokens;
  r.sampling.ignore_eos = true;
  r.sampling.temperature = 0.0f;
  return r;
}

}  // namespace zinfer::bench
