// The scheduler's view of a request and of each of its samples (sequences).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/kv/block_hash.h"
#include "actors/scheduler/policies/scheduling_policy.h"
#include "protocol/messages.h"

namespace zinfer::scheduler {

enum class SeqStatus {
  kWaiting,      // queued for (re)admission; holds no device blocks
  kRunning,      // holds device blocks; scheduled each step until it finishes
  kSwapped,      // its blocks are in the host pool
  kForkPending,  // sample i > 0 of an n > 1 request, until sample 0 has computed the prompt
  kFinished,
};

struct Request {
  uint64_t request_id = 0;
  protocol::SamplingParams sampling;
  int32_t priority = 0;
  int64_t arrival_ns = 0;
  uint64_t arrival_order = 0;
  std::string tenant;
  int32_t predicted_output_tokens = 0;  // 0 = no prediction
  kv::BlockHash cache_root = kv::root_block_hash();  // salted_root_hash(cache_salt): its blocks' first parent
  int32_t num_prompt_tokens = 0;
  int32_t cached_tokens = 0;          // prompt tokens served from the prefix cache at admission
  std::vector<uint64_t> seq_ids;      // index i = sample i
  int32_t num_unfinished = 0;
  bool forked = false;                // n > 1: the samples have been forked from sample 0
  bool started = false;               // RequestStart emitted
  bool admitted = false;              // sample 0 was admitted once (cached_tokens is known)
  int64_t scheduled_ns = 0;           // steady clock when sample 0 was first admitted (RequestStart's)
  // prompt_logprobs (prompt_logprobs.h): the positions scored so far, from position 1 (id =
  // request_id), and whether they were sent (once, with the request's first TokenDelta).
  protocol::PromptLogprobs prompt_logprobs;
  bool prompt_logprobs_sent = false;
};

struct Sequence {
  uint64_t seq_id = 0;
  Request* request = nullptr;
  int32_t index = 0;                  // which of the request's n samples
  std::vector<int32_t> tokens;        // prompt + generated tokens known so far
  int32_t num_computed = 0;           // positions whose KV a planned step writes (planned = done)
  int32_t num_pending = 0;            // tokens sampled by a step in flight, not yet known (< max_plans_in_flight)
  int64_t seed = -1;
  SeqStatus status = SeqStatus::kWaiting;
  bool preempted = false;
  bool ever_scheduled = false;        // the executor may hold state for it
  bool rules_sent = false;            // its sampling rules went with a sampling work (the executor keeps them)
  uint64_t epoch = 0;                 // bumped whenever its blocks are dropped (recompute)
  uint64_t not_before_step = 0;       // it may not run in an earlier step (after fork)
  uint64_t scheduled_step = 0;        // the last step it was planned in
  // Full blocks that the KV manager last registered in the prefix cache for it (postprocess asks
  // again only when this grows: most steps complete no block); -1 whenever it (re)starts
  // running, i.e. its blocks may have changed (admission, swap-in, fork).
  int32_t full_blocks_registered = -1;
  SortKey queue_key{};                // its key in the queue it waits in (SequenceQueue's)

  int32_t num_prompt() const { return request->num_prompt_tokens; }
  int32_t num_outputs() const { return static_cast<int32_t>(tokens.size()) - num_prompt(); }
  // Length counting the token in flight.
  int32_t total_len() const { return static_cast<int32_t>(tokens.size()) + num_pending; }
  SequenceView view() const {
    const Request& r = *request;
    SequenceView v;
    v.seq_id = seq_id;
    v.prompt_tokens = r.num_prompt_tokens;
    v.computed_tokens = num_computed;
    v.generated_tokens = num_outputs() + num_pending;
    v.max_tokens = r.sampling.max_tokens;
    v.priority = r.priority;
    v.arrival_ns = r.arrival_ns;
    v.arrival_order = r.arrival_order;
    v.preempted = preempted;
    v.tenant = r.tenant;
    if (r.predicted_output_tokens > 0) v.predicted_output_tokens = r.predicted_output_tokens;
    return v;
  }
};

}  // namespace zinfer::scheduler
