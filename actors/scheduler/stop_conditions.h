// When a sample ends, judged after each new token.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "protocol/messages.h"

namespace zinfer::scheduler {

// The finish reason after `token` became the `num_outputs`-th generated token of a sequence now
// `seq_len` tokens long, or "" when it goes on:
//   "stop"   the token is an eos id (unless ignore_eos) or in stop_token_ids, once min_tokens
//            tokens exist (before that, such a token is kept as ordinary output);
//   "length" max_tokens tokens generated, or the sequence reached max_model_len.
// The stopping token itself is part of the output (it was generated and counts as usage).
std::string finish_reason_after(int32_t token, int32_t num_outputs, int32_t seq_len,
                                const protocol::SamplingParams& sampling,
                                std::span<const int32_t> eos_token_ids, int32_t max_model_len);

}  // namespace zinfer::scheduler
