// Sampling one token from a row of logits: the grammar mask and the rules of config.rules first (penalties, masks,
// logit_bias: gpu/sampling_rules.h), then greedy, or temperature / min_p / top-k / top-p with a
// uniform draw that depends only on (seed, sample_index), so a seeded sequence samples the same
// tokens whatever else shares its batch. The reported logprob is the log-softmax of the raw,
// untempered logits, as is each top_logprobs alternative.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "gpu/backend.h"
#include "gpu/token_masks.h"

namespace zinfer::gpu::cpu {

struct Sample {
  int32_t token = -1;
  float logprob = 0.0f;
  std::vector<std::pair<int32_t, float>> top;  // best first
};

// A uniform double in [0, 1) from a counter-based generator keyed by (seed, counter).
double counter_uniform(uint64_t seed, uint64_t counter);

// `unseeded_seed` keys the draw when config.seed < 0 (the caller picks it at random). `outputs`:
// the tokens the sequence generated so far, read by config.rules (penalties, bad words).
// `mask`: the row's grammar mask (gpu/token_masks.h; null: none): a token whose bit is clear is
// -inf before the rules, the temperature and the cuts, greedy included.
Sample sample_logits(const float* logits, int32_t vocab, const SamplingConfig& config, uint64_t unseeded_seed,
                     std::span<const int32_t> outputs = {}, const uint32_t* mask = nullptr);

}  // namespace zinfer::gpu::cpu
