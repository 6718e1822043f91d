// The logits processing a request asks for, in the form the executor keeps per sequence
// (protocol::SamplingRules): sent with the sequence's first sampling work only.
#pragma once

#include <cstdint>
#include <span>

#include "protocol/messages.h"

namespace zinfer::scheduler {

// Whether the request's sampling needs more than temperature / top-k / top-p (structured output
// included: the executor masks by the grammar, docs/structured-output.md).
bool has_sampling_rules(const protocol::SamplingParams& sampling);

// The rules of a sequence that has generated `outputs` after `prompt`. min_tokens masks the
// request's stop_token_ids and, unless ignore_eos, the model's eos ids; the prompt travels only
// when the repetition penalty reads it.
protocol::SamplingRules sampling_rules(const protocol::SamplingParams& sampling, std::span<const int32_t> prompt,
                                       std::span<const int32_t> outputs, std::span<const int32_t> eos_token_ids);

}  // namespace zinfer::scheduler
