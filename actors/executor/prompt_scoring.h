// The executor's part of vLLM's prompt_logprobs: after a step, the works that a plan's
// PromptScoring names are run again through Backend::forward_logits (every position's logits)
// and each fed token is scored against the logits of the position before it. The second pass
// rewrites the same positions' K/V from the same prefix, so the cache is as the step left it; it
// costs a prefill of those tokens again, paid only by the requests that ask for prompt logprobs,
// and keeps the backends' fast step (which computes only the sampled rows' logits) unchanged.
#pragma once

#include <span>
#include <vector>

#include "gpu/backend.h"
#include "protocol/messages.h"

namespace zinfer::actors {

// Scores each entry of `scoring` against the sequence of `batch` it names (which must feed token
// ids, not use_last_sampled); throws std::invalid_argument when it names none. Pieces of at most
// `max_piece` positions go through forward_logits at a time, to bound the logits' memory.
std::vector<protocol::PromptLogprobs> score_prompts(gpu::Backend& backend, std::span<const protocol::PromptScoring> scoring,
                                                    const gpu::BatchInput& batch, int32_t max_piece = 256);

// The log-softmax of `logits` at `token`, its rank (1 + the number of tokens with a larger logit)
// and the `top` most likely tokens, best first (ties: the smaller id first).
struct TokenScore {
  float logprob = 0.0f;
  int32_t rank = 1;
  std::vector<protocol::TopLogprob> top;
};
TokenScore score_token(std::span<const float> logits, int32_t token, int32_t top);

}  // namespace zinfer::actors
