// Resetting a step-path record for reuse: every field back to its default, but the vectors that
// a record of every step fills (token ids, block table) keep their memory. The scheduler writes
// each step's SeqWork and TokenDelta records into those of an earlier step, and the executor
// decodes each plan into the previous one, instead of allocating a vector or two per running
// sequence per step (docs/benchmarks/scheduler.md).
#pragma once

#include <utility>
#include <vector>

#include "protocol/messages.h"

namespace zinfer::protocol {

inline void reset_keeping_memory(SeqWork& w) {
  std::vector<int32_t> token_ids = std::move(w.token_ids), block_table = std::move(w.block_table);
  w = SeqWork{};
  token_ids.clear();
  block_table.clear();
  w.token_ids = std::move(token_ids);
  w.block_table = std::move(block_table);
}

inline void reset_keeping_memory(TokenDelta& d) {
  std::vector<int32_t> token_ids = std::move(d.token_ids);
  d = TokenDelta{};
  token_ids.clear();
  d.token_ids = std::move(token_ids);
}

}  // namespace zinfer::protocol
