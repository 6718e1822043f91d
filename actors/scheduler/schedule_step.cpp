// SchedulerCore::schedule(): the plan of one step (the order of decisions is described in
// scheduler_core.h).
#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "actors/scheduler/prompt_logprobs.h"
#include "actors/scheduler/sampling_rules.h"
#include "actors/scheduler/scheduler_core.h"
#include "protocol/record_reuse.h"

namespace zinfer::scheduler {

bool SchedulerCore::is_unforked_leader(const Sequence& s) const {
  return s.index == 0 && s.request->sampling.n > 1 && !s.request->forked;
}

// The length the sequence's KV must reach before it can sample next: all its tokens (counting
// the one in flight), or, for sample 0 of an n > 1 request before the fork, the prompt but its
// last token (each sample computes that one itself).
int32_t SchedulerCore::target_len(const Sequence& s) const {
  return is_unforked_leader(s) ? s.num_prompt() - 1 : s.total_len();
}

// True when the token in flight is the sequence's last whatever its value (max_tokens or
// max_model_len reached): it gets no more work, its result will finish it.
bool SchedulerCore::awaits_last_result(const Sequence& s) const {
  return s.num_outputs() + s.num_pending >= s.request->sampling.max_tokens || s.total_len() >= config_.max_model_len;
}

int32_t SchedulerCore::chunk_room(const StepBuilder& b) const {
  int32_t room = b.budget;
  if (config_.long_prefill_token_threshold > 0) room = std::min(room, config_.long_prefill_token_threshold);
  if (b.prefill_share > 0) room = std::min(room, b.prefill_share);
  return room;
}

bool SchedulerCore::partial_prefills() const { return config_.max_num_partial_prefills > 1; }

bool SchedulerCore::is_long_prefill(int32_t uncached) const {
  return partial_prefills() && long_threshold_ > 0 && uncached > long_threshold_;
}

// May a prompt with `uncached` tokens to compute take part in this step? At most
// max_num_partial_prefills prompts per step, of which at most max_long_partial_prefills long.
SchedulerCore::PrefillSlot SchedulerCore::prefill_slot(const StepBuilder& b, int32_t uncached) const {
  if (!partial_prefills() || uncached <= 1) return PrefillSlot::kYes;
  if (b.num_prefills >= config_.max_num_partial_prefills) return PrefillSlot::kFull;
  if (is_long_prefill(uncached) && b.num_long_prefills >= config_.max_long_partial_prefills) return PrefillSlot::kNotLong;
  return PrefillSlot::kYes;
}

void SchedulerCore::count_prefill(StepBuilder& b, int32_t uncached) const {
  if (!partial_prefills() || uncached <= 1) return;
  ++b.num_prefills;
  if (is_long_prefill(uncached)) ++b.num_long_prefills;
}

// Each prompt's chunk is at most the budget over the prompts that may compute in this step (vLLM's
// partial-prefill budget): the running prompts, then the waiting ones in line as admission would
// take them (a long one past max_long_partial_prefills is passed over), up to
// max_num_partial_prefills. Waiting prompts are judged by their length without the prefix cache.
int32_t SchedulerCore::prefill_share() const {
  if (!partial_prefills()) return 0;
  const int32_t max_prefills = config_.max_num_partial_prefills;
  int32_t prefills = 0;
  int32_t longs = 0;
  for (const Sequence* s : running_) {
    if (s->status != SeqStatus::kRunning || awaits_last_result(*s)) continue;
    const int32_t remaining = target_len(*s) - s->num_computed;
    if (remaining <= 1) continue;
    ++prefills;
    if (is_long_prefill(remaining)) ++longs;
  }
  const size_t scan = std::min<size_t>(waiting_.size(), static_cast<size_t>(config_.max_num_seqs));
  for (size_t i = 0; i < scan && prefills < max_prefills; ++i) {
    const Sequence& s = waiting_.at(i);
    const int32_t remaining = target_len(s) - s.num_computed;
    if (is_long_prefill(remaining)) {
      if (longs >= config_.max_long_partial_prefills) continue;
      ++longs;
    }
    ++prefills;
  }
  prefills = std::clamp(prefills, 1, max_prefills);
  return std::max(1, config_.max_num_batched_tokens / prefills);
}

std::optional<protocol::StepPlan> SchedulerCore::schedule() {
  if (static_cast<int32_t>(in_flight_.size()) >= config_.max_plans_in_flight) return std::nullopt;
  StepBuilder b;
  b.plan.step_id = next_step_id_;
  b.record.step_id = next_step_id_;
  b.budget = config_.max_num_batched_tokens;
  b.prefill_share = prefill_share();
  b.plan.seqs = std::move(spare_seqs_);
  b.record.works = std::move(spare_works_);
  b.record.works.clear();
  const size_t expected = std::min<size_t>(running_.size() + 8, static_cast<size_t>(config_.max_num_seqs));
  b.plan.seqs.reserve(expected);
  b.record.works.reserve(expected);

  if (policy_->state_version() != keyed_version_) {
    // The policy's state moved since the queues were keyed (fair share: service was counted).
    waiting_.rekey();
    swapped_.rekey();
    keyed_version_ = policy_->state_version();
  }
  schedule_running(b, /*decodes=*/true);
  schedule_running(b, /*decodes=*/false);
  if (!b.preempted_any) {
    schedule_swapped(b);
    // Swapped sequences go first: nothing new is admitted while one of them waits for room.
    if (swapped_.empty()) schedule_waiting(b);
    if (b.forked_ready) schedule_running(b, /*decodes=*/true);
  }
  std::erase_if(running_, [](const Sequence* s) { return s->status != SeqStatus::kRunning; });

  auto& p = b.plan;
  if (b.num_works == 0 && p.swap_out.empty() && p.swap_in.empty() && p.copy.empty()) {
    spare_seqs_ = std::move(p.seqs);  // still unused: kept for the next plan
    spare_works_ = std::move(b.record.works);
    return std::nullopt;
  }
  p.seqs.resize(b.num_works);  // drops the recycled records this plan did not need
  p.finished = std::move(finished_for_executor_);
  finished_for_executor_.clear();
  if (config_.block_table_deltas) table_sender_.forget(p.finished);
  ++next_step_id_;
  ++steps_;
  count_iteration_tokens(config_.max_num_batched_tokens - b.budget);
  in_flight_.push_back(std::move(b.record));
  return std::move(b.plan);
}

void SchedulerCore::recycle(protocol::StepPlan&& plan) {
  spare_seqs_ = std::move(plan.seqs);
  if (finished_for_executor_.empty()) {
    plan.finished.clear();
    finished_for_executor_.swap(plan.finished);
  }
}

protocol::SeqWork& SchedulerCore::next_work(StepBuilder& b) {
  auto& seqs = b.plan.seqs;
  if (b.num_works == seqs.size()) {
    ++b.num_works;
    return seqs.emplace_back();
  }
  protocol::SeqWork& w = seqs[b.num_works++];
  protocol::reset_keeping_memory(w);
  return w;
}

void SchedulerCore::schedule_running(StepBuilder& b, bool decodes) {
  const uint64_t step = b.plan.step_id;
  // Index loop: fork_samples appends to running_ (those samples wait for the next step).
  for (size_t i = 0; i < running_.size(); ++i) {
    Sequence& s = *running_[i];
    if (s.status != SeqStatus::kRunning || s.scheduled_step == step || s.not_before_step > step) continue;
    if (awaits_last_result(s)) continue;
    const int32_t remaining = target_len(s) - s.num_computed;
    if (remaining <= 0 || (remaining == 1) != decodes) continue;
    if (b.num_seqs >= config_.max_num_seqs || b.budget <= 0) return;
    if (!decodes && prefill_slot(b, remaining) != PrefillSlot::kYes) continue;
    const int32_t num_new = std::min(remaining, chunk_room(b));
    if (!allocate_or_preempt(b, s, s.num_computed + num_new)) continue;
    if (!decodes) count_prefill(b, remaining);
    emit_work(b, s, num_new);
  }
}

void SchedulerCore::schedule_swapped(StepBuilder& b) {
  while (!swapped_.empty() && b.num_seqs < config_.max_num_seqs && b.budget > 0) {
    Sequence& s = swapped_.front();
    if (s.num_pending > 0) break;  // its token in flight must be known before it runs again
    const int32_t num_new = std::max(0, std::min(target_len(s) - s.num_computed, chunk_room(b)));
    const int32_t host_blocks = static_cast<int32_t>(kv_.block_table(s.seq_id).size());
    const int32_t reserve = std::max(0, kv_.blocks_for(s.num_computed + num_new) - host_blocks);
    const kv::SwapPlan in = kv_.plan_swap_in(s.seq_id, reserve);
    if (!in.feasible) break;
    auto copies = kv_.commit_swap_in(in);
    b.plan.swap_in.insert(b.plan.swap_in.end(), copies.begin(), copies.end());
    swapped_.pop_front();
    s.status = SeqStatus::kRunning;
    s.full_blocks_registered = -1;
    running_.push_back(&s);
    if (num_new == 0) continue;
    const kv::AllocationPlan alloc = kv_.plan_allocation(s.seq_id, s.num_computed + num_new);
    if (!alloc.feasible) throw std::logic_error("scheduler: swap-in reserved too few blocks");
    auto a = kv_.commit(alloc);
    b.plan.copy.insert(b.plan.copy.end(), a.copies.begin(), a.copies.end());
    emit_work(b, s, num_new);
  }
}

void SchedulerCore::schedule_waiting(StepBuilder& b) {
  size_t at = 0;  // the first in line not passed over (a long prompt past max_long_partial_prefills)
  while (at < waiting_.size() && b.num_seqs < config_.max_num_seqs && b.budget > 0) {
    Sequence& s = waiting_.at(at);
    if (s.num_pending > 0) break;  // preempted with a token in flight: wait for it
    const bool leader = is_unforked_leader(s);
    const int32_t target = target_len(s);
    // At least one token is computed when the step must sample (see scheduler_core.h); none is
    // taken from the cache while prompt logprobs are owed (prompt_logprobs.h).
    const int32_t max_cached = needs_prompt_scoring(*s.request) ? 0 : leader ? target : target - 1;
    const kv::PrefixMatch match =
        kv_.match_prefix(std::span<const int32_t>(s.tokens).first(static_cast<size_t>(target)), max_cached,
                         s.request->cache_root);
    const int32_t uncached = target - match.num_tokens;
    const PrefillSlot slot = prefill_slot(b, uncached);
    if (slot == PrefillSlot::kFull) break;
    if (slot == PrefillSlot::kNotLong) {
      // The short prompts behind it go first; the scan is bounded like a step's sequences.
      if (++at >= static_cast<size_t>(config_.max_num_seqs)) break;
      continue;
    }
    const int32_t num_new = std::min(uncached, chunk_room(b));
    const kv::AllocationPlan alloc = kv_.plan_allocation(s.seq_id, match.num_tokens + num_new, &match);
    if (!alloc.feasible) break;  // admission never preempts; the policy's order is kept
    const kv::Allocation a = kv_.commit(alloc);
    if (at == 0) {
      waiting_.pop_front();
    } else {
      waiting_.erase(s);
    }
    count_prefill(b, uncached);
    s.status = SeqStatus::kRunning;
    s.full_blocks_registered = -1;
    s.num_computed = a.num_cached_tokens;
    running_.push_back(&s);
    if (s.index == 0 && !s.request->admitted) {
      s.request->admitted = true;
      s.request->cached_tokens = a.num_cached_tokens;
      s.request->scheduled_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    if (num_new > 0) {
      emit_work(b, s, num_new);
    } else if (leader) {
      fork_samples(b, s, /*ready_now=*/true);  // the prompt (but its last token) was all cached
    }
  }
}

bool SchedulerCore::allocate_or_preempt(StepBuilder& b, Sequence& s, int32_t target_slots) {
  while (true) {
    const kv::AllocationPlan plan = kv_.plan_allocation(s.seq_id, target_slots);
    if (plan.feasible) {
      const kv::Allocation a = kv_.commit(plan);
      b.plan.copy.insert(b.plan.copy.end(), a.copies.begin(), a.copies.end());
      return true;
    }
    Sequence* victim = pick_victim(b, s);
    preempt(b, *victim);
    if (victim == &s) return false;
  }
}

// The running sequence, not yet planned in this step, that the policy serves last; `asking`
// itself when it comes last.
Sequence* SchedulerCore::pick_victim(const StepBuilder& b, Sequence& asking) {
  Sequence* victim = &asking;
  SortKey victim_key = policy_->key(asking.view());
  for (Sequence* s : running_) {
    if (s->status != SeqStatus::kRunning || s->scheduled_step == b.plan.step_id || s == &asking) continue;
    const SortKey key = policy_->key(s->view());
    if (key > victim_key || (key == victim_key && s->seq_id > victim->seq_id)) {
      victim = s;
      victim_key = key;
    }
  }
  return victim;
}

void SchedulerCore::preempt(StepBuilder& b, Sequence& s) {
  ++num_preemptions_;
  b.preempted_any = true;
  s.preempted = true;
  if (config_.preemption == PreemptionMode::kSwap) {
    const kv::SwapPlan out = kv_.plan_swap_out(s.seq_id);
    if (out.feasible) {
      auto copies = kv_.commit_swap_out(out);
      b.plan.swap_out.insert(b.plan.swap_out.end(), copies.begin(), copies.end());
      s.status = SeqStatus::kSwapped;
      swapped_.insert(s);
      return;
    }
    // The host pool is full: fall back to recompute.
  }
  kv_.free(s.seq_id);
  s.num_computed = 0;
  ++s.epoch;
  s.status = SeqStatus::kWaiting;
  waiting_.insert(s);
}

void SchedulerCore::emit_work(StepBuilder& b, Sequence& s, int32_t num_new) {
  const Request& r = *s.request;
  const int32_t known = static_cast<int32_t>(s.tokens.size());
  if (s.num_pending > 0) {
    // Only the newest token in flight is left to feed: the executor has it on the device (the
    // older ones in flight are fed by the plans before this one).
    if (num_new != 1 || s.num_computed != s.total_len() - 1) {
      throw std::logic_error("scheduler: sequence " + std::to_string(s.seq_id) + " would feed an unknown token");
    }
  } else if (s.num_computed + num_new > known) {
    throw std::logic_error("scheduler: sequence " + std::to_string(s.seq_id) + " has too few tokens for its chunk");
  }
  protocol::SeqWork& w = next_work(b);
  w.seq_id = s.seq_id;
  w.start_pos = s.num_computed;
  w.num_tokens = num_new;
  if (s.num_pending > 0) {
    w.use_last_sampled = true;
  } else {
    w.token_ids.assign(s.tokens.begin() + s.num_computed, s.tokens.begin() + s.num_computed + num_new);
  }
  if (config_.block_table_deltas) {
    table_sender_.fill(w, kv_.block_table(s.seq_id), kv_.table_generation(s.seq_id));
  } else {
    w.block_table = kv_.block_table(s.seq_id);
  }
  const bool leader = is_unforked_leader(s);
  w.sample = !leader && s.num_computed + num_new == s.total_len();
  w.temperature = r.sampling.temperature;
  w.top_p = r.sampling.top_p;
  w.top_k = r.sampling.top_k;
  w.seed = s.seed;
  w.sample_index = s.num_outputs() + s.num_pending;
  w.top_logprobs = r.sampling.logprobs ? std::max(0, r.sampling.top_logprobs) : 0;
  if (w.sample && !s.rules_sent && has_sampling_rules(r.sampling)) {
    // The executor keeps them until the sequence is reported finished.
    const std::span<const int32_t> tokens(s.tokens);
    w.rules = sampling_rules(r.sampling, tokens.first(static_cast<size_t>(s.num_prompt())),
                             tokens.subspan(static_cast<size_t>(s.num_prompt())), config_.eos_token_ids);
    s.rules_sent = true;
  }
  if (!w.use_last_sampled) {
    if (auto scoring = prompt_scoring_for(s, s.num_computed, num_new)) b.plan.prompt_scoring.push_back(*scoring);
  }
  b.record.works.push_back(PlannedWork{s.seq_id, s.epoch, s.num_computed + num_new, num_new, w.sample});

  s.num_computed += num_new;
  if (w.sample) ++s.num_pending;
  s.scheduled_step = b.plan.step_id;
  s.ever_scheduled = true;
  b.budget -= num_new;
  ++b.num_seqs;
  if (leader && s.num_computed == target_len(s)) fork_samples(b, s, /*ready_now=*/false);
}

// Sample 0 has (or will have, once this step ran) the prompt but its last token: the other
// samples start from its blocks. They may run in this step only when no work of this step
// writes that prefix.
void SchedulerCore::fork_samples(StepBuilder& b, Sequence& leader, bool ready_now) {
  Request& r = *leader.request;
  r.forked = true;
  for (size_t i = 1; i < r.seq_ids.size(); ++i) {
    Sequence* s = find_seq(r.seq_ids[i]);
    if (!s || s->status != SeqStatus::kForkPending) continue;
    kv_.fork(leader.seq_id, s->seq_id);
    s->num_computed = leader.num_computed;
    s->status = SeqStatus::kRunning;
    s->full_blocks_registered = -1;
    s->not_before_step = ready_now ? 0 : b.plan.step_id + 1;
    running_.push_back(s);
  }
  if (ready_now) b.forked_ready = true;
}

}  // namespace zinfer::scheduler
