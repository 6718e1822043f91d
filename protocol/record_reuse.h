// Resetting a step-path record for reuse: every field back to its default, but its vectors keep
// their memory. The scheduler writes
// each step's SeqWork and TokenDelta records into those of an earlier step, and the executor
// decodes each plan into the previous one, instead of allocating a vector or two per running
// sequence per step (docs/benchmarks/scheduler.md).
#pragma once

#include <utility>
#include <vector>

#include "protocol/messages.h"

namespace zinfer::protocol {

// Field by field (assigning a default-constructed record instead costs a zero-filled temporary
// and a string move per record, most of the reset's time). A field added to a record must be
// reset here too: the size checks below fail until it is.
static_assert(sizeof(SeqWork) == 392, "SeqWork changed: reset its new field in reset_keeping_memory");
static_assert(sizeof(TokenDelta) == 136, "TokenDelta changed: reset its new field in reset_keeping_memory");

inline void reset_keeping_memory(SeqWork& w) {
  const SeqWork defaults;
  w.seq_id = defaults.seq_id;
  w.token_ids.clear();
  w.use_last_sampled = defaults.use_last_sampled;
  w.num_tokens = defaults.num_tokens;
  w.start_pos = defaults.start_pos;
  w.block_table.clear();
  w.sample = defaults.sample;
  w.temperature = defaults.temperature;
  w.top_p = defaults.top_p;
  w.top_k = defaults.top_k;
  w.seed = defaults.seed;
  w.sample_index = defaults.sample_index;
  w.top_logprobs = defaults.top_logprobs;
  w.block_table_start = defaults.block_table_start;
  w.rules.reset();
}

inline void reset_keeping_memory(TokenDelta& d) {
  const TokenDelta defaults;
  d.request_id = defaults.request_id;
  d.index = defaults.index;
  d.token_ids.clear();
  d.logprobs.clear();
  d.top_logprobs.clear();
  d.finish_reason.clear();
  d.prompt_tokens = defaults.prompt_tokens;
  d.completion_tokens = defaults.completion_tokens;
  d.cached_tokens = defaults.cached_tokens;
}

}  // namespace zinfer::protocol
