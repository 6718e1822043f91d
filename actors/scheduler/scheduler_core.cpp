// SchedulerCore: requests in and out (add, abort, postprocess) and statistics. The planning of a
// step is in schedule_step.cpp.
#include "actors/scheduler/scheduler_core.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "actors/scheduler/prompt_logprobs.h"
#include "actors/scheduler/stop_conditions.h"
#include "protocol/record_reuse.h"

namespace zinfer::scheduler {

SchedulerCore::SchedulerCore(SchedulerConfig config)
    : config_((config.validate(), std::move(config))),
      long_threshold_(config_.long_prefill_threshold()),
      policy_(make_policy(config_.policy)),
      kv_(config_.kv_config()),
      waiting_(*policy_),
      swapped_(*policy_) {}

SchedulerCore::~SchedulerCore() = default;

Sequence* SchedulerCore::find_seq(uint64_t seq_id) {
  auto it = seqs_.find(seq_id);
  return it == seqs_.end() ? nullptr : it->second.get();
}

size_t SchedulerCore::num_running() const {
  return static_cast<size_t>(std::count_if(running_.begin(), running_.end(),
                                           [](const Sequence* s) { return s->status == SeqStatus::kRunning; }));
}

SchedulerOutput SchedulerCore::reject(const protocol::TokenizedRequest& request, int32_t code,
                                      const std::string& kind, const std::string& message) {
  SchedulerOutput out;
  protocol::RequestStart start;
  start.request_id = request.request_id;
  start.n = std::max(request.sampling.n, 1);
  start.prompt_tokens = static_cast<int32_t>(request.prompt_ids.size());
  start.stop = request.sampling.stop;
  start.skip_special_tokens = request.sampling.skip_special_tokens;
  start.logprobs = request.sampling.logprobs;
  start.stop_token_ids = request.sampling.stop_token_ids;
  start.include_stop_str_in_output = request.sampling.include_stop_str_in_output;
  if (request.sampling.return_prompt) start.prompt_ids = request.prompt_ids;
  out.starts.push_back(start);
  for (int32_t i = 0; i < start.n; ++i) {
    protocol::TokenDelta d;
    d.request_id = request.request_id;
    d.index = i;
    d.finish_reason = "error";
    d.prompt_tokens = start.prompt_tokens;
    out.deltas.push_back(std::move(d));
  }
  out.errors.push_back(protocol::ErrorReply{request.request_id, code, kind, message});
  return out;
}

SchedulerOutput SchedulerCore::add_request(const protocol::TokenizedRequest& request) {
  const auto id = request.request_id;
  const auto& sp = request.sampling;
  const std::string who = "request " + std::to_string(id);
  if (requests_.count(id)) {
    SchedulerOutput out;  // no deltas: they would end the request already running under this id
    out.errors.push_back(protocol::ErrorReply{id, 400, "duplicate_request", who + " is already queued"});
    return out;
  }
  const int32_t prompt_len = static_cast<int32_t>(request.prompt_ids.size());
  if (prompt_len == 0) return reject(request, 400, "invalid_request", who + " has an empty prompt");
  if (sp.n < 1) return reject(request, 400, "invalid_request", who + ": n must be >= 1, got " + std::to_string(sp.n));
  if (sp.max_tokens < 1) {
    return reject(request, 400, "invalid_request", who + ": max_tokens must be >= 1, got " + std::to_string(sp.max_tokens));
  }
  if (request.predicted_output_tokens < 0) {
    return reject(request, 400, "invalid_request",
                  who + ": predicted_output_tokens must be >= 1 (or 0 for none), got " +
                      std::to_string(request.predicted_output_tokens));
  }
  if (prompt_len >= config_.max_model_len) {
    return reject(request, 400, "context_length_exceeded",
                  who + " has " + std::to_string(prompt_len) + " prompt tokens; max_model_len " +
                      std::to_string(config_.max_model_len) + " leaves no room for a generated token");
  }
  const int64_t longest = std::min<int64_t>(static_cast<int64_t>(prompt_len) + sp.max_tokens, config_.max_model_len);
  if (kv_.blocks_for(longest) > config_.num_device_blocks) {
    return reject(request, 413, "kv_capacity_exceeded",
                  who + " may reach " + std::to_string(longest) + " tokens (" + std::to_string(kv_.blocks_for(longest)) +
                      " blocks) but the KV pool has " + std::to_string(config_.num_device_blocks) + " blocks");
  }

  auto req = std::make_unique<Request>();
  req->request_id = id;
  req->sampling = sp;
  req->priority = request.priority;
  req->arrival_ns = request.arrival_ns;
  req->arrival_order = next_arrival_++;
  req->tenant = request.tenant;
  req->predicted_output_tokens = request.predicted_output_tokens;
  req->cache_root = kv::salted_root_hash(request.cache_salt);
  req->num_prompt_tokens = prompt_len;
  req->num_unfinished = sp.n;
  for (int32_t i = 0; i < sp.n; ++i) {
    auto seq = std::make_unique<Sequence>();
    seq->seq_id = next_seq_id_++;
    seq->request = req.get();
    seq->index = i;
    seq->tokens = request.prompt_ids;
    seq->seed = sp.seed >= 0 ? sp.seed + i : unseeded_seed(req->arrival_order, i);
    seq->status = i == 0 ? SeqStatus::kWaiting : SeqStatus::kForkPending;
    req->seq_ids.push_back(seq->seq_id);
    policy_->on_arrival(seq->view());
    if (i == 0) waiting_.insert(*seq);
    seqs_.emplace(seq->seq_id, std::move(seq));
  }
  requests_.emplace(id, std::move(req));
  prompt_tokens_ += prompt_len;
  return {};
}

int64_t SchedulerCore::unseeded_seed(uint64_t arrival_order, int32_t index) const {
  if (config_.seed < 0) return -1;
  // splitmix64 of (seed, arrival, index): distinct streams per sample, not the seeds a client
  // would pick (seed, seed + 1, ...). The top bit is cleared: a seed is non-negative.
  uint64_t z = static_cast<uint64_t>(config_.seed) ^ (arrival_order * 0x9e3779b97f4a7c15ull) ^
               (static_cast<uint64_t>(index) * 0xd1b54a32d192ed03ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<int64_t>(z >> 1);
}

void SchedulerCore::ensure_started(Request& r, SchedulerOutput& out) {
  if (r.started) return;
  r.started = true;
  protocol::RequestStart start;
  start.request_id = r.request_id;
  start.n = r.sampling.n;
  start.prompt_tokens = r.num_prompt_tokens;
  start.stop = r.sampling.stop;
  start.skip_special_tokens = r.sampling.skip_special_tokens;
  start.logprobs = r.sampling.logprobs;
  start.stop_token_ids = r.sampling.stop_token_ids;
  start.include_stop_str_in_output = r.sampling.include_stop_str_in_output;
  start.scheduled_ns = r.scheduled_ns;
  if (r.sampling.return_prompt && !r.seq_ids.empty()) {
    if (const Sequence* s0 = find_seq(r.seq_ids.front())) {
      start.prompt_ids.assign(s0->tokens.begin(), s0->tokens.begin() + r.num_prompt_tokens);
    }
  }
  out.starts.push_back(std::move(start));
}

void SchedulerCore::fill_delta(const Sequence& s, protocol::TokenDelta& d) const {
  d.request_id = s.request->request_id;
  d.index = s.index;
  d.prompt_tokens = s.request->num_prompt_tokens;
  d.completion_tokens = s.num_outputs();
  d.cached_tokens = s.request->cached_tokens;
}

protocol::TokenDelta SchedulerCore::make_delta(const Sequence& s) const {
  protocol::TokenDelta d;
  fill_delta(s, d);
  return d;
}

void SchedulerCore::recycle(std::vector<protocol::TokenDelta>&& deltas) {
  if (deltas.capacity() > spare_deltas_.capacity()) spare_deltas_ = std::move(deltas);
}

void SchedulerCore::retire(Sequence& s) {
  if (s.status == SeqStatus::kFinished) return;
  kv_.free(s.seq_id);
  switch (s.status) {
    case SeqStatus::kRunning: {
      auto it = std::find(running_.begin(), running_.end(), &s);
      if (it != running_.end()) running_.erase(it);
      break;
    }
    case SeqStatus::kWaiting: waiting_.erase(s); break;
    case SeqStatus::kSwapped: swapped_.erase(s); break;
    default: break;
  }
  if (s.ever_scheduled) finished_for_executor_.push_back(s.seq_id);
  s.status = SeqStatus::kFinished;
  --s.request->num_unfinished;
  policy_->on_departure(s.view());
}

void SchedulerCore::end_request(Request& r, const std::string& reason, SchedulerOutput& out) {
  ensure_started(r, out);
  for (uint64_t id : r.seq_ids) {
    Sequence* s = find_seq(id);
    if (!s || s->status == SeqStatus::kFinished) continue;
    retire(*s);
    protocol::TokenDelta d = make_delta(*s);
    d.finish_reason = reason;
    out.deltas.push_back(std::move(d));
  }
  drop_request(r);
}

void SchedulerCore::drop_request(Request& r) {
  for (uint64_t id : r.seq_ids) seqs_.erase(id);
  requests_.erase(r.request_id);  // destroys r
}

SchedulerOutput SchedulerCore::abort(uint64_t request_id, const std::string& reason, int32_t index) {
  SchedulerOutput out;
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return out;
  Request& r = *it->second;
  const std::string why = reason.empty() ? "abort" : reason;
  // One sample of several (a stop string in sample `index`): end just that one, once the samples
  // have been forked and so live on their own; before that the request ends as a whole.
  if (index >= 0 && r.seq_ids.size() > 1 && r.forked && static_cast<size_t>(index) < r.seq_ids.size()) {
    Sequence* s = find_seq(r.seq_ids[static_cast<size_t>(index)]);
    if (!s || s->status == SeqStatus::kFinished) return out;
    ensure_started(r, out);
    retire(*s);
    protocol::TokenDelta d = make_delta(*s);
    d.finish_reason = why;
    out.deltas.push_back(std::move(d));
    if (r.num_unfinished == 0) drop_request(r);
    return out;
  }
  end_request(r, why, out);
  return out;
}

SchedulerOutput SchedulerCore::postprocess(const protocol::StepResult& result) {
  if (in_flight_.empty()) {
    throw std::invalid_argument("StepResult for step " + std::to_string(result.step_id) + " but no plan is in flight");
  }
  if (result.step_id != in_flight_.front().step_id) {
    throw std::invalid_argument("StepResult for step " + std::to_string(result.step_id) + ", expected step " +
                                std::to_string(in_flight_.front().step_id));
  }
  const InFlight& rec = in_flight_.front();
  SchedulerOutput out;

  if (!result.error.empty()) {
    // The step failed: every request with a sequence in it fails (all its samples: a sample left
    // waiting for a fork from a failed one would wait forever).
    for (const PlannedWork& w : rec.works) {
      Sequence* s = find_seq(w.seq_id);
      if (!s) continue;
      Request& r = *s->request;
      const uint64_t rid = r.request_id;
      end_request(r, "error", out);
      out.errors.push_back(protocol::ErrorReply{rid, 500, "executor_error", "step " + std::to_string(result.step_id) + " failed: " + result.error});
    }
    in_flight_.pop_front();
    return out;
  }

  // Check the whole result before changing anything.
  size_t expected = 0;
  for (const PlannedWork& w : rec.works) {
    if (!w.sample) continue;
    if (expected >= result.outputs.size() || result.outputs[expected].seq_id != w.seq_id) {
      throw std::invalid_argument("StepResult for step " + std::to_string(result.step_id) + ": output " +
                                  std::to_string(expected) + " should be for sequence " + std::to_string(w.seq_id));
    }
    ++expected;
  }
  if (expected != result.outputs.size()) {
    throw std::invalid_argument("StepResult for step " + std::to_string(result.step_id) + " has " +
                                std::to_string(result.outputs.size()) + " outputs, the plan sampled " +
                                std::to_string(expected));
  }

  // Sequences the executor failed on their own (a structured output that does not compile):
  // their requests end with the error, every sample of them; the rest of the step stands. Their
  // outputs below then find no sequence and are dropped.
  SchedulerOutput failed;
  for (const protocol::SeqError& e : result.seq_errors) {
    Sequence* s = find_seq(e.seq_id);
    if (!s || s->status == SeqStatus::kFinished) continue;
    const uint64_t rid = s->request->request_id;
    end_request(*s->request, "error", failed);
    failed.errors.push_back(protocol::ErrorReply{rid, 400, "invalid_request", e.message});
  }
  for (const protocol::PromptLogprobs& piece : result.prompt_logprobs) {
    Sequence* s = find_seq(piece.id);
    if (s && s->status != SeqStatus::kFinished) add_prompt_logprobs(*s->request, piece);
  }

  // The deltas are written in place into recycled ones where there are some (recycle()):
  // out.deltas[0, used) are this step's, the rest are spare until resized away below.
  out.deltas.swap(spare_deltas_);
  out.deltas.reserve(result.outputs.size());
  size_t used = 0;
  auto next_delta = [&]() -> protocol::TokenDelta& {
    if (used == out.deltas.size()) {
      ++used;
      return out.deltas.emplace_back();
    }
    protocol::TokenDelta& d = out.deltas[used++];
    protocol::reset_keeping_memory(d);
    return d;
  };
  size_t next_output = 0;
  const bool counts_service = policy_->counts_service();
  for (const PlannedWork& w : rec.works) {
    const protocol::SeqOutput* o = w.sample ? &result.outputs[next_output++] : nullptr;
    Sequence* s = find_seq(w.seq_id);
    if (!s || s->status == SeqStatus::kFinished) continue;  // finished one step late: dropped
    if (counts_service) policy_->on_served(s->view(), w.num_tokens);
    if (s->epoch == w.epoch && s->status == SeqStatus::kRunning) {
      const int32_t computed = std::min<int32_t>(w.end_pos, static_cast<int32_t>(s->tokens.size()));
      // Registers the blocks completed since the last call: none unless computed / block_size
      // changed (a decode crosses a block boundary one step in block_size), so the look-up is
      // skipped otherwise; compared without dividing (-1 blocks: always called).
      const int32_t bs = config_.block_size;
      const int32_t registered = s->full_blocks_registered * bs;
      if (computed < registered || computed >= registered + bs) {
        kv_.cache_full_blocks(s->seq_id, s->tokens, computed);
        s->full_blocks_registered = computed / bs;
      }
    }
    if (!o) continue;
    // The token is valid even if the sequence was preempted since: it was computed from the
    // right prefix. It becomes part of what a recompute feeds.
    s->num_pending = std::max(0, s->num_pending - 1);
    s->tokens.push_back(o->token);
    ++generation_tokens_;
    Request& r = *s->request;
    ensure_started(r, out);
    if (r.sampling.prompt_logprobs >= 0 && !r.prompt_logprobs_sent) {
      r.prompt_logprobs_sent = true;
      r.prompt_logprobs.id = r.request_id;
      r.prompt_logprobs.first_position = 1;
      out.prompt_logprobs.push_back(std::move(r.prompt_logprobs));
    }
    protocol::TokenDelta& d = next_delta();
    fill_delta(*s, d);
    d.token_ids.push_back(o->token);
    if (r.sampling.logprobs) {
      d.logprobs.push_back(o->logprob);
      if (r.sampling.top_logprobs > 0) d.top_logprobs.push_back(o->top_logprobs);
    }
    d.finish_reason = finish_reason_after(o->token, s->num_outputs(), static_cast<int32_t>(s->tokens.size()),
                                          r.sampling, config_.eos_token_ids, config_.max_model_len);
    if (!d.finish_reason.empty()) retire(*s);
    if (r.num_unfinished == 0) drop_request(r);
  }
  out.deltas.resize(used);
  spare_works_ = std::move(in_flight_.front().works);  // the next schedule() reuses its memory
  in_flight_.pop_front();
  if (!failed.deltas.empty() || !failed.errors.empty()) out.append(std::move(failed));
  return out;
}

void SchedulerCore::count_iteration_tokens(int64_t tokens) {
  const auto& bounds = protocol::kIterationTokenBuckets;
  iteration_tokens_.resize(std::size(bounds) + 1, 0);
  const size_t bucket = static_cast<size_t>(std::lower_bound(std::begin(bounds), std::end(bounds), tokens) - std::begin(bounds));
  ++iteration_tokens_[bucket];
  iteration_tokens_sum_ += tokens;
}

protocol::Stats SchedulerCore::stats() const {
  protocol::Stats st;
  const kv::KvStats kv = kv_.stats();
  st.running = static_cast<int32_t>(num_running());
  st.waiting = static_cast<int32_t>(waiting_.size());
  st.swapped = static_cast<int32_t>(swapped_.size());
  st.kv_usage = kv.usage;
  st.prefix_hit_rate = kv.prefix_hit_rate;
  st.num_preemptions = num_preemptions_;
  st.prompt_tokens = prompt_tokens_;
  st.generation_tokens = generation_tokens_;
  st.steps = steps_;
  st.num_gpu_blocks = kv.num_device_blocks;
  st.free_gpu_blocks = kv.free_device_blocks;
  st.num_cpu_blocks = kv.num_host_blocks;
  st.free_cpu_blocks = kv.free_host_blocks;
  st.iteration_tokens = iteration_tokens_;
  st.iteration_tokens.resize(std::size(protocol::kIterationTokenBuckets) + 1, 0);
  st.iteration_tokens_sum = iteration_tokens_sum_;
  return st;
}

}  // namespace zinfer::scheduler
