#include "harness.h"

#include <deque>
#include <set>

#include <gtest/gtest.h>

namespace zinfer::scheduler::testing {

void Transcript::take(const SchedulerOutput& out) {
  for (const auto& s : out.starts) {
    EXPECT_FALSE(started[s.request_id]) << "two RequestStart for request " << s.request_id;
    started[s.request_id] = true;
  }
  for (const auto& p : out.prompt_logprobs) {
    // Before the request's first token, once.
    EXPECT_EQ(tokens.count({p.id, 0}), 0u) << "prompt logprobs of request " << p.id << " after its first token";
    prompt_logprobs[p.id].push_back(p);
  }
  for (const auto& d : out.deltas) {
    const SampleKey key{d.request_id, d.index};
    EXPECT_TRUE(started[d.request_id]) << "TokenDelta before RequestStart for request " << d.request_id;
    EXPECT_EQ(finish.count(key), 0u) << "output after the finish of request " << d.request_id << " sample " << d.index;
    auto& toks = tokens[key];
    toks.insert(toks.end(), d.token_ids.begin(), d.token_ids.end());
    EXPECT_EQ(d.completion_tokens, static_cast<int32_t>(toks.size())) << "request " << d.request_id;
    cached_tokens[d.request_id] = d.cached_tokens;
    if (!d.finish_reason.empty()) finish[key] = d.finish_reason;
  }
  errors.insert(errors.end(), out.errors.begin(), out.errors.end());
}

void drive(SchedulerCore& core, FakeExecutor& exec, Transcript& t, const DriveOptions& options) {
  std::deque<protocol::StepPlan> in_flight;
  int32_t steps = 0;
  while (true) {
    while (true) {
      auto plan = core.schedule();
      if (!plan) break;
      EXPECT_LE(static_cast<int32_t>(core.num_in_flight()), core.config().max_plans_in_flight);
      t.plans.push_back(*plan);
      in_flight.push_back(std::move(*plan));
    }
    if (in_flight.empty()) {
      ASSERT_FALSE(core.has_unfinished()) << "scheduler stalled with " << core.num_requests() << " requests left";
      return;
    }
    protocol::StepResult result = exec.run(in_flight.front());
    if (options.recycle) core.recycle(std::move(in_flight.front()));
    in_flight.pop_front();
    SchedulerOutput out = core.postprocess(result);
    t.take(out);
    if (options.recycle) core.recycle(std::move(out.deltas));
    ++steps;
    if (options.after_step) options.after_step(core, steps, t);
    ASSERT_LT(steps, options.max_steps) << "no end after " << steps << " steps";
  }
}

protocol::TokenizedRequest make_request(uint64_t id, std::vector<int32_t> prompt, int32_t max_tokens, bool ignore_eos) {
  protocol::TokenizedRequest r;
  r.request_id = id;
  r.prompt_ids = std::move(prompt);
  r.sampling.max_tokens = max_tokens;
  r.sampling.temperature = 0.0f;
  r.sampling.ignore_eos = ignore_eos;
  return r;
}

std::vector<int32_t> prompt_of(int32_t length, int32_t salt) {
  std::vector<int32_t> p;
  for (int32_t i = 0; i < length; ++i) p.push_back(100 + (i * 7 + salt * 13) % 900);
  return p;
}

std::vector<uint64_t> first_planned_order(const Transcript& t) {
  std::vector<uint64_t> order;
  std::set<uint64_t> seen;
  for (const auto& p : t.plans) {
    for (const auto& w : p.seqs) {
      if (seen.insert(w.seq_id).second) order.push_back(w.seq_id);
    }
  }
  return order;
}

void expect_all_returned(const SchedulerCore& core) {
  const auto& kv = core.kv();
  EXPECT_EQ(kv.num_sequences(), 0u);
  EXPECT_EQ(kv.device_pool().num_available(), kv.device_pool().num_blocks());
  EXPECT_EQ(kv.device_pool().num_in_use(), 0);
  for (int32_t b = 0; b < kv.device_pool().num_blocks(); ++b) EXPECT_EQ(kv.device_pool().ref_count(b), 0) << "block " << b;
  EXPECT_EQ(kv.host_pool().num_available(), kv.host_pool().num_blocks());
  EXPECT_FALSE(core.has_unfinished());
  EXPECT_EQ(core.num_waiting(), 0u);
  EXPECT_EQ(core.num_swapped(), 0u);
  EXPECT_EQ(core.num_running(), 0u);
}

}  // namespace zinfer::scheduler::testing

#include "actors/scheduler/stop_conditions.h"

namespace zinfer::scheduler::testing {

std::vector<int32_t> expected_stream(const protocol::TokenizedRequest& request, int32_t index,
                                     const std::vector<int32_t>& eos_ids, int32_t max_model_len, int32_t vocab) {
  std::vector<int32_t> history = request.prompt_ids;
  std::vector<int32_t> out;
  const int64_t seed = request.sampling.seed < 0 ? -1 : request.sampling.seed + index;
  while (true) {
    int32_t t = FakeExecutor::next_token(history, seed, static_cast<int32_t>(out.size()), request.sampling.temperature, vocab);
    history.push_back(t);
    out.push_back(t);
    if (!finish_reason_after(t, static_cast<int32_t>(out.size()), static_cast<int32_t>(history.size()), request.sampling,
                             eos_ids, max_model_len)
             .empty()) {
      return out;
    }
  }
}

}  // namespace zinfer::scheduler::testing
