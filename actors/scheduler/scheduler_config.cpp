#include "actors/scheduler/scheduler_config.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

PreemptionMode parse_preemption_mode(std::string_view name) {
  if (name == "recompute") return PreemptionMode::kRecompute;
  if (name == "swap") return PreemptionMode::kSwap;
  throw std::invalid_argument("unknown preemption mode '" + std::string(name) + "' (known: recompute, swap)");
}

const char* to_string(PreemptionMode mode) {
  return mode == PreemptionMode::kSwap ? "swap" : "recompute";
}

void SchedulerConfig::validate() const {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("scheduler config: " + what);
  };
  require(max_num_batched_tokens >= 1, "max_num_batched_tokens must be >= 1, got " + std::to_string(max_num_batched_tokens));
  require(max_num_seqs >= 1, "max_num_seqs must be >= 1, got " + std::to_string(max_num_seqs));
  require(max_model_len >= 2, "max_model_len must be >= 2, got " + std::to_string(max_model_len));
  require(block_size >= 1, "block_size must be >= 1, got " + std::to_string(block_size));
  require(num_device_blocks >= 1, "num_device_blocks must be >= 1, got " + std::to_string(num_device_blocks));
  require(num_host_blocks >= 0, "num_host_blocks must be >= 0, got " + std::to_string(num_host_blocks));
  require(long_prefill_token_threshold >= 0,
          "long_prefill_token_threshold must be >= 0, got " + std::to_string(long_prefill_token_threshold));
  require(max_num_partial_prefills >= 1,
          "max_num_partial_prefills must be >= 1, got " + std::to_string(max_num_partial_prefills));
  require(max_long_partial_prefills >= 1 && max_long_partial_prefills <= max_num_partial_prefills,
          "max_long_partial_prefills must be 1 to max_num_partial_prefills (" +
              std::to_string(max_num_partial_prefills) + "), got " + std::to_string(max_long_partial_prefills));
  require(max_plans_in_flight >= 1 && max_plans_in_flight <= kMaxPlansInFlight,
          "max_plans_in_flight must be 1 to " + std::to_string(kMaxPlansInFlight) + ", got " +
              std::to_string(max_plans_in_flight));
}

int32_t SchedulerConfig::long_prefill_threshold() const {
  if (long_prefill_token_threshold > 0) return long_prefill_token_threshold;
  // vLLM's 4% of the context, but never below a prompt's share of a step: a prompt that fits its
  // share is not long, whatever the context (4% of a small one would make every prompt long).
  if (max_num_partial_prefills > 1) {
    return std::max({1, static_cast<int32_t>(max_model_len * 0.04), max_num_batched_tokens / max_num_partial_prefills});
  }
  return 0;
}

kv::KvConfig SchedulerConfig::kv_config() const {
  kv::KvConfig c;
  c.block_size = block_size;
  c.num_device_blocks = num_device_blocks;
  c.num_host_blocks = num_host_blocks;
  c.enable_prefix_caching = enable_prefix_caching;
  return c;
}

const settings::Settings<SchedulerConfig>& scheduler_settings() {
  using C = SchedulerConfig;
  static const settings::Settings<C> s = {
      settings::text<C>("scheduler", "policy", &C::policy, policy_names(),
                        "which waiting sequence runs first (priority: lower `priority` field first)"),
      settings::enumerated<C>("scheduler", "preemption", &C::preemption,
                              std::vector<std::pair<std::string, PreemptionMode>>{{"recompute", PreemptionMode::kRecompute},
                                                                                  {"swap", PreemptionMode::kSwap}},
                              "what happens to a running sequence when the KV cache is full"),
      settings::integer<C>("scheduler", "max_num_seqs", &C::max_num_seqs, 1, 4096, "sequences in one step at most"),
      settings::integer<C>("scheduler", "max_num_batched_tokens", &C::max_num_batched_tokens, 16, 1 << 20,
                           "tokens in one step at most (decodes first, then prefill chunks)"),
      settings::integer<C>("scheduler", "max_plans_in_flight", &C::max_plans_in_flight, 1, kMaxPlansInFlight,
                           "steps planned ahead of the executor's results"),
      settings::integer<C>("scheduler", "long_prefill_token_threshold", &C::long_prefill_token_threshold, 0, 1 << 20,
                           "prompt tokens one sequence computes in a step at most (0 = the step's budget); "
                           "smaller chunks shorten the steps of the decodes beside them"),
      settings::integer<C>("scheduler", "max_num_partial_prefills", &C::max_num_partial_prefills, 1, 1024,
                           "prompts computing chunks in one step at most, each with an equal share of the "
                           "budget (1 = one prompt may take the whole budget)"),
      settings::integer<C>("scheduler", "max_long_partial_prefills", &C::max_long_partial_prefills, 1, 1024,
                           "of those, long prompts at most (longer than long_prefill_token_threshold, "
                           "or 4% of max_model_len when that is 0); short ones go past the others"),
      settings::integer<C>("scheduler", "seed", &C::seed, -1, std::numeric_limits<int64_t>::max(),
                           "-1 = unseeded requests are random; else they get seeds from this and their "
                           "order of arrival (reproducible runs)"),
      settings::flag<C>("cache", "enable_prefix_caching", &C::enable_prefix_caching,
                        "share full KV blocks of identical prompt prefixes"),
  };
  return s;
}

std::string check_settings(const SchedulerConfig& c) {
  if (c.max_num_batched_tokens < c.max_num_seqs) {
    return "scheduler.max_num_batched_tokens (" + std::to_string(c.max_num_batched_tokens) +
           ") must be at least scheduler.max_num_seqs (" + std::to_string(c.max_num_seqs) + ")";
  }
  if (c.max_long_partial_prefills > c.max_num_partial_prefills) {
    return "scheduler.max_long_partial_prefills (" + std::to_string(c.max_long_partial_prefills) +
           ") must be at most scheduler.max_num_partial_prefills (" + std::to_string(c.max_num_partial_prefills) + ")";
  }
  return "";
}

}  // namespace zinfer::scheduler
