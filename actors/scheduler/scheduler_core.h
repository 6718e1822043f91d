// The scheduler's decisions, without sockets: waiting / running / swapped queues, continuous
// batching with chunked prefill, stop conditions, preemption, n > 1 samples, abort, statistics.
//
// A step is three calls:   schedule() -> StepPlan;  the executor runs it;  postprocess(result).
// Overlap (docs/architecture.md, I14, I15): schedule() may be called again while up to max_plans_in_flight - 1
// plans are unanswered. It then assumes that every sequence sampling in a plan in flight yields
// exactly one token: such a sequence's next decode carries use_last_sampled and its slot is
// allocated already. A prompt chunk counts as computed as soon as it is planned (plans run in
// order). When a result shows that a sequence finished, its blocks are freed at once, the token it
// computes in the plan still in flight is dropped, and its id goes into the next plan's
// `finished` list.
//
// Within a step: running decodes first, then running prefill chunks, then (when nothing was
// preempted in this step) swapped sequences are swapped back in, then (when none is left
// swapped out) waiting sequences are admitted in policy order, each with a chunk of at most the
// remaining token budget; at most max_num_seqs sequences take part in a step. A waiting sequence
// that does not fit stops admission (the policy's order is kept; admission never preempts).
// Partial prefills (max_num_partial_prefills > 1): at most that many prompts compute chunks in a
// step, each chunk at most the budget divided by the prompts in line (up to that many), and at
// most max_long_partial_prefills of them long: a long waiting prompt past that cap is passed over
// so that the short ones behind it start beside the long one already running.
// When a running sequence needs a block and none is free, the running sequence the policy
// serves last (not yet planned in this step) is preempted, possibly the one asking: `swap`
// copies its blocks to the host pool (swap_out in the plan) or, when the host pool is full,
// falls back to `recompute`, which frees its blocks and requeues it (first in line under FCFS)
// to recompute prompt + generated tokens. A preempted sequence resumes only once the token it
// had in flight is known, and always with explicit token ids.
//
// Policy (policies/scheduling_policy.h): the waiting and swapped queues are kept in the order of
// the policy's keys, recomputed at the start of a step whenever the policy's state changed since
// (fair share); the policy hears of each sequence's arrival (add_request), of the tokens each step
// computed for it (postprocess, from the result) and of its departure (finish, abort, failure).
//
// Prefix cache: a (re)admitted sequence starts with the cached full blocks of its tokens, but at
// least one token is always computed so that the step produces logits: when every full block of
// the sequence is cached and its length is a multiple of the block size, the last block is
// recomputed (the last block, not the last token, because a cached block is shared and never
// written).
//
// n > 1: sample 0 computes the prompt but its last token; then the other samples fork from it
// (sharing every block) and each computes the last prompt token itself, sampling its first token
// from it. The partly filled shared block is copied on first write (a BlockCopy in the plan).
// With a seed, sample i uses seed + i, so the samples differ but the request is reproducible.
//
// Outputs: one TokenDelta per sampled token (the token that stops a sample is included and
// counted), a RequestStart before a request's first TokenDelta. A plan is made only when there is
// work or a block copy; the `finished` ids wait for the next plan (the executor's state for a few
// finished sequences outlives them until then).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/kv/block_manager.h"
#include "actors/scheduler/policies/scheduling_policy.h"
#include "actors/scheduler/scheduler_config.h"
#include "actors/scheduler/scheduler_output.h"
#include "actors/scheduler/sequence.h"
#include "actors/scheduler/sequence_queue.h"
#include "protocol/block_table_delta.h"
#include "protocol/messages.h"

namespace zinfer::scheduler {

class SchedulerCore {
 public:
  explicit SchedulerCore(SchedulerConfig config);
  ~SchedulerCore();
  SchedulerCore(const SchedulerCore&) = delete;
  SchedulerCore& operator=(const SchedulerCore&) = delete;

  // Queues a request. A request that can never run (empty prompt, prompt not shorter than
  // max_model_len, more blocks than the device pool, max_tokens < 1, n < 1, a duplicate id) is
  // answered at once: RequestStart + one TokenDelta "error" per sample + an ErrorReply.
  SchedulerOutput add_request(const protocol::TokenizedRequest& request);

  // Ends a request now, wherever it is: its blocks are freed and each unfinished sample gets a
  // TokenDelta with finish_reason `reason` ("abort" by default). Unknown ids are ignored (the
  // request may have finished already).
  // With index >= 0 only that sample ends (the others go on), once the samples have forked.
  SchedulerOutput abort(uint64_t request_id, const std::string& reason = "abort", int32_t index = -1);

  // The next step, or nothing when there is no work or max_plans_in_flight plans are unanswered.
  std::optional<protocol::StepPlan> schedule();
  // Optional: hands back a plan from schedule() once it is sent (encoded), so that the next
  // plans reuse its memory (the SeqWork records and their token and block-table vectors) instead
  // of allocating ~3 vectors per running sequence per step. The plans are the same either way.
  void recycle(protocol::StepPlan&& plan);
  // Optional, likewise: hands back the TokenDeltas of outputs once sent (encoded), so that the
  // deltas of later steps reuse their memory (the vector and each delta's token vector).
  void recycle(std::vector<protocol::TokenDelta>&& deltas);

  // Takes the result of the oldest plan in flight (results come back in plan order; another
  // order throws std::invalid_argument). A result with `error` fails the requests in that plan.
  SchedulerOutput postprocess(const protocol::StepResult& result);

  // ---- inspection -------------------------------------------------------------------------
  protocol::Stats stats() const;
  bool has_unfinished() const { return !requests_.empty(); }
  size_t num_requests() const { return requests_.size(); }
  // The ids of every request not finished yet (in no particular order).
  std::vector<uint64_t> request_ids() const {
    std::vector<uint64_t> ids;
    ids.reserve(requests_.size());
    for (const auto& [id, _] : requests_) ids.push_back(id);
    return ids;
  }
  size_t num_in_flight() const { return in_flight_.size(); }
  // The step id postprocess() expects next (the oldest unanswered plan); 0 when none is in flight.
  uint64_t oldest_in_flight_step() const { return in_flight_.empty() ? 0 : in_flight_.front().step_id; }
  size_t num_running() const;
  size_t num_waiting() const { return waiting_.size(); }
  size_t num_swapped() const { return swapped_.size(); }
  const kv::BlockManager& kv() const { return kv_; }
  const SchedulerConfig& config() const { return config_; }
  std::string_view policy_name() const { return policy_->name(); }

  // With block_table_deltas: the next plans carry whole tables again (after an executor error,
  // when its mirror may have missed a plan).
  void resend_block_tables() { table_sender_.reset(); }

 private:
  // The seed of sample `index` of the `arrival_order`-th request when the request has none:
  // -1 (the executor's random source) unless [scheduler] seed is set.
  int64_t unseeded_seed(uint64_t arrival_order, int32_t index) const;
  // One sequence's share of a plan in flight, kept to read its result.
  struct PlannedWork {
    uint64_t seq_id;
    uint64_t epoch;
    int32_t end_pos;  // start_pos + num_tokens
    int32_t num_tokens;
    bool sample;
  };
  struct InFlight {
    uint64_t step_id;
    std::vector<PlannedWork> works;
  };

  // Per-step planning state (schedule_step.cpp).
  struct StepBuilder {
    protocol::StepPlan plan;  // plan.seqs[num_works, size) are recycled records not used yet
    size_t num_works = 0;
    InFlight record;
    int32_t budget = 0;
    int32_t num_seqs = 0;
    bool preempted_any = false;
    bool forked_ready = false;  // samples forked in this step that may run in it
    int32_t prefill_share = 0;  // the most tokens of one prompt's chunk (0: no partial-prefill rule)
    int32_t num_prefills = 0;   // prompts computing a chunk in this step (partial prefills)
    int32_t num_long_prefills = 0;
  };
  enum class PrefillSlot { kYes, kFull, kNotLong };

  // schedule_step.cpp
  int32_t target_len(const Sequence& s) const;
  // Tokens one sequence may add in this step: the step's budget left, capped by
  // long_prefill_token_threshold when it is set and by the step's prefill share.
  int32_t chunk_room(const StepBuilder& b) const;
  bool partial_prefills() const;
  bool is_long_prefill(int32_t uncached) const;
  PrefillSlot prefill_slot(const StepBuilder& b, int32_t uncached) const;
  void count_prefill(StepBuilder& b, int32_t uncached) const;
  int32_t prefill_share() const;
  bool awaits_last_result(const Sequence& s) const;
  void schedule_running(StepBuilder& b, bool decodes);
  void schedule_swapped(StepBuilder& b);
  void schedule_waiting(StepBuilder& b);
  bool allocate_or_preempt(StepBuilder& b, Sequence& s, int32_t target_slots);
  Sequence* pick_victim(const StepBuilder& b, Sequence& asking);
  void preempt(StepBuilder& b, Sequence& s);
  void emit_work(StepBuilder& b, Sequence& s, int32_t num_new);
  // The next SeqWork of the plan, all fields at their defaults: a recycled record (its vectors
  // keep their memory) or a new one.
  static protocol::SeqWork& next_work(StepBuilder& b);
  void fork_samples(StepBuilder& b, Sequence& leader, bool ready_now);
  bool is_unforked_leader(const Sequence& s) const;

  // scheduler_core.cpp
  SchedulerOutput reject(const protocol::TokenizedRequest& request, int32_t code, const std::string& kind,
                         const std::string& message);
  void ensure_started(Request& r, SchedulerOutput& out);
  // Ends a sequence: frees its blocks, takes it out of its queue, tells the executor (next plan).
  void retire(Sequence& s);
  // Retires every unfinished sample of `r` with a TokenDelta carrying `reason`, then forgets `r`.
  void end_request(Request& r, const std::string& reason, SchedulerOutput& out);
  protocol::TokenDelta make_delta(const Sequence& s) const;
  // Sets the delta's per-sample fields; the others (tokens, finish_reason) are the caller's.
  void fill_delta(const Sequence& s, protocol::TokenDelta& d) const;
  // Forgets a request whose samples are all finished (its Sequence objects too).
  void drop_request(Request& r);
  Sequence* find_seq(uint64_t seq_id);

  SchedulerConfig config_;
  int32_t long_threshold_;  // config_.long_prefill_threshold()
  std::unique_ptr<SchedulingPolicy> policy_;
  kv::BlockManager kv_;
  std::unordered_map<uint64_t, std::unique_ptr<Request>> requests_;
  std::unordered_map<uint64_t, std::unique_ptr<Sequence>> seqs_;
  std::vector<Sequence*> running_;  // admission order; finished/preempted entries removed lazily
  SequenceQueue waiting_;
  SequenceQueue swapped_;
  uint64_t keyed_version_ = 0;  // the policy's state_version() the queues were keyed at
  std::deque<InFlight> in_flight_;
  protocol::BlockTableSender table_sender_;  // what the executor holds, with block_table_deltas
  std::vector<uint64_t> finished_for_executor_;
  // Memory handed back by recycle() and postprocess(), reused by the next schedule().
  std::vector<protocol::SeqWork> spare_seqs_;
  std::vector<PlannedWork> spare_works_;
  std::vector<protocol::TokenDelta> spare_deltas_;
  uint64_t next_seq_id_ = 1;
  uint64_t next_step_id_ = 1;
  uint64_t next_arrival_ = 0;
  // statistics
  int64_t num_preemptions_ = 0;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  int64_t steps_ = 0;
  std::vector<int64_t> iteration_tokens_;  // per bucket of protocol::kIterationTokenBuckets, + one
  int64_t iteration_tokens_sum_ = 0;
  void count_iteration_tokens(int64_t tokens);
};

}  // namespace zinfer::scheduler
