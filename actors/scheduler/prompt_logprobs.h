// vLLM's prompt_logprobs in the scheduler: which works of a plan ask the executor to score the
// prompt tokens they feed (a PromptScoring), how the scored pieces of a request's prompt are put
// together, and when the whole prompt's logprobs leave (once, before the request's first
// TokenDelta).
//
// Only sample 0 computes the prompt (with n > 1 the others fork from it after all but its last
// token), so only its works are scored. The positions come back in plan order; a piece that
// repeats positions already known (a prompt recomputed after a preemption) adds nothing. A
// request that asks for prompt logprobs takes no prefix-cache hit (schedule_waiting): a cached
// block's positions are not computed, so nothing would score them (vLLM recomputes them too).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "actors/scheduler/sequence.h"
#include "protocol/messages.h"

namespace zinfer::scheduler {

// Whether the request asked for prompt logprobs and some prompt position is still unscored.
bool needs_prompt_scoring(const Request& r);

// The scoring of the work that feeds `s` positions [start, start + num_new), or nothing when the
// work scores no prompt position not already known.
std::optional<protocol::PromptScoring> prompt_scoring_for(const Sequence& s, int32_t start, int32_t num_new);

// Adds a scored piece (PromptLogprobs::id is the seq_id) to the request's prompt logprobs.
void add_prompt_logprobs(Request& r, const protocol::PromptLogprobs& piece);

}  // namespace zinfer::scheduler
