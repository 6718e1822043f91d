// The settings of the scheduler core and of the KV pools it plans over. The ones a config file
// sets are described in scheduler_settings() (settings/setting.h): their defaults are the members'
// defaults below, the one place they are written. The others derive from the executor at start-up
// (block geometry, context length, eos ids) or are chosen by the code that starts the scheduler.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "actors/kv/kv_types.h"
#include "settings/setting.h"

namespace zinfer::scheduler {

// What happens to a running sequence evicted because the KV cache is full.
enum class PreemptionMode {
  kRecompute,  // free its blocks, requeue it, recompute prompt + generated tokens later
  kSwap,       // copy its blocks to the host pool, bring them back later (recompute if the host is full)
};

// "recompute" or "swap"; throws std::invalid_argument naming the value otherwise.
PreemptionMode parse_preemption_mode(std::string_view name);
const char* to_string(PreemptionMode mode);

// Plans the scheduler may have unanswered at once. 2 hides the control plane behind a GPU step;
// more hide a slow link to the executor (processes over ipc, a remote scheduler) when steps are
// short, at the cost of one wasted token per extra plan when a sequence stops.
constexpr int32_t kMaxPlansInFlight = 8;

struct SchedulerConfig {
  int32_t max_num_batched_tokens = 2048;  // [scheduler] tokens per step (decodes + prefill chunks)
  int32_t max_num_seqs = 256;             // [scheduler] sequences per step
  int32_t max_model_len = 4096;           // prompt + generated tokens of one sequence (the executor's)
  int32_t block_size = 16;                // the executor's cache geometry
  int32_t num_device_blocks = 1024;       // the executor's cache geometry
  int32_t num_host_blocks = 0;            // the executor's cache geometry
  bool enable_prefix_caching = true;      // [cache]
  std::string policy = "fcfs";            // [scheduler] a name known to make_policy (policies/)
  PreemptionMode preemption = PreemptionMode::kRecompute;  // [scheduler]
  std::vector<int32_t> eos_token_ids;     // the model's; ignored for requests with ignore_eos
  // [scheduler] seed: -1 = unseeded requests sample from the executor's random source; else each
  // unseeded sample gets a seed made of this and its order of arrival, so that a server started
  // with the same seed and sent the same requests in the same order samples the same tokens
  // (vLLM's --seed).
  int64_t seed = -1;
  int32_t max_plans_in_flight = 2;        // [scheduler] 1..kMaxPlansInFlight; 2 plans step N+1 while step N runs
  // [scheduler] The most prompt tokens one sequence computes in a step (0: up to the step's
  // budget). A prefill chunk beside decodes lengthens their step, so a smaller cap bounds the
  // inter-token latency of the running sequences at the cost of more steps per prompt (vLLM's
  // long_prefill_token_threshold).
  int32_t long_prefill_token_threshold = 0;
  // [scheduler] Partial prefills (vLLM's max_num_partial_prefills, max_long_partial_prefills): at
  // most this many prompts compute chunks in one step, and each chunk is at most the step's budget
  // divided by the number of prompts in line (up to this many), so a long prompt leaves room for
  // the short ones that arrive beside it. 1 turns the rule off (one prompt may take the budget).
  int32_t max_num_partial_prefills = 4;
  // [scheduler] Of those, at most this many are long (more uncached prompt tokens than
  // long_prefill_threshold()); a long waiting prompt beyond it lets the short ones behind it in.
  int32_t max_long_partial_prefills = 1;
  // Plans carry each block table after the prefix earlier plans sent (protocol 1.2,
  // protocol/block_table_delta.h); the executor must keep a BlockTableMirror. Off: whole tables.
  bool block_table_deltas = false;

  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
  // The uncached prompt length above which a prompt is long: long_prefill_token_threshold when
  // set, else (partial prefills on) 4% of max_model_len as vLLM derives it but at least
  // max_num_batched_tokens / max_num_partial_prefills, else 0 (none is long).
  int32_t long_prefill_threshold() const;
  kv::KvConfig kv_config() const;
};

// The settings a config file sets: [scheduler] policy, preemption, max_num_seqs,
// max_num_batched_tokens, max_plans_in_flight, long_prefill_token_threshold,
// max_num_partial_prefills, max_long_partial_prefills and [cache]
// enable_prefix_caching. The policy's
// allowed names are policy_names() (policies/scheduling_policy.h).
const settings::Settings<SchedulerConfig>& scheduler_settings();

// The rule between settings that each descriptor alone cannot check: "" when the settings agree,
// else why not, naming the keys (a step must hold one token of every sequence it runs).
std::string check_settings(const SchedulerConfig& config);

}  // namespace zinfer::scheduler
