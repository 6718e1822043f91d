#include "random_workload.h"

#include <algorithm>

#include "harness.h"

namespace zinfer::scheduler::testing {

SchedulerConfig random_config(const Pick& pick) {
  SchedulerConfig c;
  c.max_num_batched_tokens = pick(8, 96);
  c.max_num_seqs = pick(1, 12);
  c.max_model_len = 160;
  c.block_size = pick(0, 1) ? 16 : 4;
  c.num_device_blocks = (c.block_size == 16 ? 11 : 41) + pick(0, 30);
  c.preemption = pick(0, 1) ? PreemptionMode::kSwap : PreemptionMode::kRecompute;
  // Mostly room on the host; sometimes too little, so that swap falls back to recompute.
  c.num_host_blocks = pick(0, 3) == 0 ? pick(0, 8) : pick(8, 80);
  c.enable_prefix_caching = pick(0, 3) != 0;
  const char* const policies[] = {"fcfs", "priority", "sjf", "fair"};
  c.policy = policies[pick(0, 3)];
  c.max_plans_in_flight = pick(1, 4);
  c.block_table_deltas = pick(0, 1) == 1;
  c.eos_token_ids = {3};
  return c;
}

std::vector<protocol::TokenizedRequest> random_requests(const Pick& pick, int32_t vocab) {
  std::vector<protocol::TokenizedRequest> rs;
  const auto shared_prefix = prompt_of(40, 77);
  const int num_requests = pick(5, 25);
  for (int i = 0; i < num_requests; ++i) {
    const int len = pick(1, 70);
    std::vector<int32_t> prompt;
    if (pick(0, 2) == 0) prompt.assign(shared_prefix.begin(), shared_prefix.begin() + std::min(len, 40));
    while (static_cast<int>(prompt.size()) < len) prompt.push_back(pick(4, vocab - 1));
    auto r = make_request(static_cast<uint64_t>(i + 1), prompt, pick(1, 60), /*ignore_eos=*/pick(0, 1) == 0);
    r.priority = pick(0, 3);
    r.sampling.n = pick(0, 4) == 0 ? pick(2, 3) : 1;
    if (r.sampling.n > 1 || pick(0, 1)) {
      r.sampling.temperature = 1.0f;
      r.sampling.seed = pick(0, 1000);
    }
    if (pick(0, 3) == 0) r.sampling.stop_token_ids = {pick(4, vocab - 1)};
    r.sampling.min_tokens = pick(0, 3) == 0 ? pick(0, 5) : 0;
    const char* const tenants[] = {"", "a", "b"};
    r.tenant = tenants[pick(0, 2)];
    r.predicted_output_tokens = pick(0, 1) ? pick(1, 80) : 0;  // sometimes short of what it makes
    rs.push_back(r);
  }
  return rs;
}

}  // namespace zinfer::scheduler::testing
