#include "actors/scheduler/prompt_logprobs.h"

#include <algorithm>
#include <optional>

namespace zinfer::scheduler {

bool needs_prompt_scoring(const Request& r) {
  if (r.sampling.prompt_logprobs < 0 || r.prompt_logprobs_sent) return false;
  // Positions 1 .. num_prompt_tokens - 1 are scored; logprobs[i] is about position i + 1.
  return static_cast<int32_t>(r.prompt_logprobs.logprobs.size()) < r.num_prompt_tokens - 1;
}

std::optional<protocol::PromptScoring> prompt_scoring_for(const Sequence& s, int32_t start, int32_t num_new) {
  const Request& r = *s.request;
  if (s.index != 0 || !needs_prompt_scoring(r)) return std::nullopt;
  const int32_t prompt = r.num_prompt_tokens;
  const int32_t scored_end = 1 + static_cast<int32_t>(r.prompt_logprobs.logprobs.size());  // next position to score
  // The work scores positions start + 1 .. start + num_new (the last one only if it is a prompt
  // token); the prompt's positions end at prompt - 1.
  const int32_t last = std::min(start + num_new, prompt - 1);
  if (start + 1 > last || last < scored_end) return std::nullopt;
  protocol::PromptScoring p;
  p.seq_id = s.seq_id;
  p.top_logprobs = r.sampling.prompt_logprobs;
  p.next_token = start + num_new < prompt ? s.tokens[static_cast<size_t>(start + num_new)] : -1;
  return p;
}

void add_prompt_logprobs(Request& r, const protocol::PromptLogprobs& piece) {
  auto& all = r.prompt_logprobs;
  const int32_t last_prompt_position = r.num_prompt_tokens - 1;
  for (size_t i = 0; i < piece.logprobs.size(); ++i) {
    const int32_t position = piece.first_position + static_cast<int32_t>(i);
    const int32_t next = 1 + static_cast<int32_t>(all.logprobs.size());
    if (position > last_prompt_position) break;  // a generated token's (a recomputed sequence's)
    if (position < next) continue;               // known already (a recompute)
    if (position > next) break;                  // a gap: never from plans run in order
    all.logprobs.push_back(piece.logprobs[i]);
    all.ranks.push_back(i < piece.ranks.size() ? piece.ranks[i] : 0);
    all.top_logprobs.push_back(i < piece.top_logprobs.size() ? piece.top_logprobs[i]
                                                             : std::vector<protocol::TopLogprob>{});
  }
}

}  // namespace zinfer::scheduler
