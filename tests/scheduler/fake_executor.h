// A deterministic stand-in for the executor that keeps a real (token-valued) paged KV cache: each
// slot of each device/host block stores the token written there. It applies a plan's swap and
// copy lists, writes every fed token into the slot its block table names, and samples
// token = f(the tokens it reads back through the block table, seed, sample index). So any
// bookkeeping mistake of the scheduler or KV manager (a block reused too early, a missed copy, a
// wrong table) changes the output tokens, and a run under memory pressure can be compared token for
// token with a run that has plenty of memory. Plans may carry block-table deltas: it keeps a
// BlockTableMirror as the executor actor does (whole tables pass through it unchanged).
// A plan's prompt_scoring is answered with logprobs that name what was scored: the token t at
// position p gets logprob -(p * 1000 + t), rank p, and alternatives k = 0.. (token k, logprob -k).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "protocol/block_table_delta.h"
#include "protocol/messages.h"

namespace zinfer::scheduler::testing {

class FakeExecutor {
 public:
  FakeExecutor(int32_t num_device_blocks, int32_t num_host_blocks, int32_t block_size, int32_t vocab);

  // Runs a plan; throws std::runtime_error on an inconsistent plan (reading an unwritten slot,
  // use_last_sampled without a previous token, a block table too short).
  protocol::StepResult run(const protocol::StepPlan& plan);

  // The token a sequence with this history samples (the reference the tests compare with).
  static int32_t next_token(const std::vector<int32_t>& history, int64_t seed, int32_t sample_index,
                            float temperature, int32_t vocab);

  size_t num_tracked_sequences() const { return last_sampled_.size(); }
  int64_t num_use_last_sampled() const { return use_last_sampled_; }
  int64_t num_block_copies() const { return copies_; }

 private:
  void copy_block(std::vector<int32_t>& from_pool, int32_t from, std::vector<int32_t>& to_pool, int32_t to);
  int32_t& slot(const std::vector<int32_t>& table, int32_t pos, uint64_t seq_id);

  protocol::StepResult run_whole(const protocol::StepPlan& plan);

  protocol::BlockTableMirror tables_;
  int32_t block_size_;
  int32_t vocab_;
  std::vector<int32_t> device_;  // [num_device_blocks * block_size], -1 = never written
  std::vector<int32_t> host_;
  std::unordered_map<uint64_t, int32_t> last_sampled_;
  int64_t use_last_sampled_ = 0;
  int64_t copies_ = 0;
};

}  // namespace zinfer::scheduler::testing
