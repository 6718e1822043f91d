// Random (seeded) scheduler workloads over every configuration axis, shared by the stress test
// and the recycling test: each draws from `pick(lo, hi)` in a fixed order, so one seed gives one
// workload.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "actors/scheduler/scheduler_config.h"
#include "protocol/messages.h"

namespace zinfer::scheduler::testing {

using Pick = std::function<int(int lo, int hi)>;

// Token budget, sequence cap, block size and count, preemption mode, host pool, prefix caching,
// policy (fcfs, priority, sjf, fair), plans in flight, block-table deltas; max_model_len 160, eos id 3.
SchedulerConfig random_config(const Pick& pick);

// 5 to 25 requests: lengths 1-70 (a third share a 40-token prefix), max_tokens 1-60, eos
// ignored or not, priorities, n > 1 with seeds, seeded sampling, stop token ids, min_tokens,
// tenants (anonymous, a, b), predicted output lengths.
std::vector<protocol::TokenizedRequest> random_requests(const Pick& pick, int32_t vocab);

}  // namespace zinfer::scheduler::testing
