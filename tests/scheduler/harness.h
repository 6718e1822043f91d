// Drives a SchedulerCore against the FakeExecutor until every request finished, keeping up to
// max_plans_in_flight plans unanswered (as the actor does), and collects what it emits while
// checking the emission contract: RequestStart before a request's first TokenDelta, exactly one
// finish per sample, completion_tokens counting every token.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/scheduler/scheduler_core.h"
#include "fake_executor.h"

namespace zinfer::scheduler::testing {

using SampleKey = std::pair<uint64_t, int32_t>;  // (request id, sample index)

struct Transcript {
  std::map<SampleKey, std::vector<int32_t>> tokens;
  std::map<SampleKey, std::string> finish;
  std::map<uint64_t, int32_t> cached_tokens;
  std::vector<protocol::StepPlan> plans;  // every plan, in order
  std::vector<protocol::ErrorReply> errors;
  std::map<uint64_t, bool> started;
  std::map<uint64_t, std::vector<protocol::PromptLogprobs>> prompt_logprobs;  // as sent, per request

  // The tokens and the finish reason of one sample (empty when it has none).
  std::vector<int32_t> out(uint64_t request_id, int32_t index = 0) const {
    auto it = tokens.find({request_id, index});
    return it == tokens.end() ? std::vector<int32_t>{} : it->second;
  }
  std::string why(uint64_t request_id, int32_t index = 0) const {
    auto it = finish.find({request_id, index});
    return it == finish.end() ? std::string() : it->second;
  }

  // Appends an output and checks the contract (gtest failures, not exceptions).
  void take(const SchedulerOutput& out);
};

struct DriveOptions {
  int32_t max_steps = 100000;
  // Called after each postprocess with the step count so far (abort mid-run, add requests...).
  std::function<void(SchedulerCore&, int32_t step, Transcript&)> after_step;
  // Hand each plan back to the core (SchedulerCore::recycle) once the executor ran it, and each
  // step's deltas once taken, as the scheduler actor does once it sent them: later plans and
  // deltas reuse their memory.
  bool recycle = true;
};

// Runs to completion; a stall (requests left, nothing schedulable, nothing in flight) or more
// than max_steps fails the test.
void drive(SchedulerCore& core, FakeExecutor& exec, Transcript& transcript, const DriveOptions& options = {});

protocol::TokenizedRequest make_request(uint64_t id, std::vector<int32_t> prompt, int32_t max_tokens,
                                        bool ignore_eos = true);
std::vector<int32_t> prompt_of(int32_t length, int32_t salt);
// The sequence ids in the order of their first work in the transcript's plans.
std::vector<uint64_t> first_planned_order(const Transcript& transcript);
// Every device and host block is free, no sequence holds blocks, and no request is left.
void expect_all_returned(const SchedulerCore& core);

}  // namespace zinfer::scheduler::testing

namespace zinfer::scheduler::testing {

// What sample `index` of a request must produce, computed without any scheduler: the FakeExecutor's
// f applied to the growing history, with the stop rules of stop_conditions.h.
std::vector<int32_t> expected_stream(const protocol::TokenizedRequest& request, int32_t index,
                                     const std::vector<int32_t>& eos_ids, int32_t max_model_len, int32_t vocab);

}  // namespace zinfer::scheduler::testing
