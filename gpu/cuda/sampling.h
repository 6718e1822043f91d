// Token sampling from float32 logits, one block per row: greedy (temperature 0), or temperature
// with top-k then top-p (the order transformers applies them), drawn with a counter-based random
// number from (seed, sample_index) so that a seeded sequence samples the same tokens whatever the
// batch it is in. logprob = log_softmax(raw logits)[token]; optional top logprobs.
// Two kernels: each row's maximum, first argmax and sum of exp(logit - max) come from
// sampling_stat_blocks(vocab) blocks per row (slices of 4,096 logits, one pass), whose partial
// results the per-row kernel combines. At batch 1 the vocabulary (128K logits for Llama-3) is
// then read by 32 SMs instead of one SM reading it twice, which left that one SM's bandwidth,
// not the card's, as the bound of a decode step's sampling.
// Rows with sampling rules (gpu/sampling_rules.h) or a grammar mask are first processed by launch_sampling_rules
// into a second buffer, from which they are drawn (greedy included; min_p, a logit cut after the
// temperature, joins top-k's threshold); their logprobs stay those of the raw logits. The
// penalties read per-sequence token counts that stay on the device: the sampling kernel adds
// each drawn token to its sequence's counts.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace zinfer::gpu::cuda {

constexpr int32_t kMaxTopLogprobs = 20;

struct SamplingBatch {
  const float* logits = nullptr;         // [num_rows, vocab]
  const float* temperature = nullptr;    // [num_rows]; <= 0 means greedy
  const float* top_p = nullptr;          // [num_rows]; >= 1 means off
  const int32_t* top_k = nullptr;        // [num_rows]; <= 0 or >= vocab means off
  const uint64_t* seed = nullptr;        // [num_rows]
  const int32_t* sample_index = nullptr; // [num_rows]
  const int32_t* num_top = nullptr;      // [num_rows], 0..kMaxTopLogprobs
  int32_t num_rows = 0;
  int32_t vocab = 0;
  int32_t* out_token = nullptr;          // [num_rows]
  float* out_logprob = nullptr;          // [num_rows]
  int32_t* out_top_ids = nullptr;        // [num_rows, kMaxTopLogprobs]
  float* out_top_logprobs = nullptr;     // [num_rows, kMaxTopLogprobs]
  // Optional: last_sampled[dest_slot[row]] = token (dest_slot < 0: none), so that the next step can
  // feed the token without a host round trip.
  const int32_t* dest_slot = nullptr;
  int32_t* last_sampled = nullptr;
  // Workspace: [2, num_rows, sampling_stat_blocks(vocab), 3] 32-bit words (the statistics'
  // partials of the raw rows and of the rows drawn from).
  float* scratch = nullptr;
  // Optional, rows with rules: processed_row[row] != 0 draws from processed (launch_sampling_rules).
  const float* processed = nullptr;        // [num_rows, vocab]
  const int32_t* processed_row = nullptr;  // [num_rows]
  const float* min_p = nullptr;            // [num_rows]; 0 = off
  // Optional: counts[count_row[row], token] += 1 after the draw (count_row < 0: none).
  const int32_t* count_row = nullptr;
  uint32_t* counts = nullptr;
};

// A sequence's token counts on the device: one word per vocabulary entry, the times the token
// was generated in the low 31 bits, kPromptBit when it is in the prompt.
constexpr uint32_t kPromptBit = 0x80000000u;

// One (list offset, length) pair per list and row in SamplingRulesBatch::list_index.
enum RuleList : int32_t { kAllowedList = 0, kBiasList = 1, kBannedList = 2, kRuleLists = 3 };

struct SamplingRulesBatch {
  const float* logits = nullptr;           // [num_rows, vocab], raw
  float* processed = nullptr;              // [num_rows, vocab]: written for the rows processed
  const int32_t* processed_row = nullptr;  // [num_rows]; 0: the row is left alone
  const float* repetition = nullptr;       // [num_rows] each
  const float* frequency = nullptr;
  const float* presence = nullptr;
  const int32_t* count_row = nullptr;      // [num_rows]: the row's counts, -1: no penalties
  const uint32_t* counts = nullptr;        // [count rows, vocab]
  // [num_rows, kRuleLists, 2] (offset, length) into lists: allowed token ids (sorted, unique),
  // logit_bias pairs (token, float bits; unique tokens), banned token ids (bad words, min_tokens).
  const int32_t* list_index = nullptr;
  const int32_t* lists = nullptr;
  int32_t num_rows = 0;
  int32_t vocab = 0;
  // Optional grammar masks (gpu/token_masks.h): a row with mask_row[row] >= 0 keeps only the
  // tokens whose bit is set in masks + mask_row[row] * mask_words; the others are -inf.
  const uint32_t* masks = nullptr;
  const int32_t* mask_row = nullptr;  // [num_rows]
  int32_t mask_words = 0;
};

// vLLM's order: allowed mask, banned tokens, logit_bias, then the repetition / frequency /
// presence penalties; the grammar mask's -inf is kept by all of them, so it is applied last.
cudaError_t launch_sampling_rules(const SamplingRulesBatch& batch, cudaStream_t stream);

// entries: [n] pairs (count row, token | kPromptBit for a prompt token): a prompt token sets
// kPromptBit of its word, an output token adds one. The rows start zeroed by the caller.
cudaError_t launch_count_tokens(uint32_t* counts, int32_t vocab, const int32_t* entries, int32_t n,
                                cudaStream_t stream);

int32_t sampling_stat_blocks(int32_t vocab);
size_t sampling_scratch_bytes(int32_t num_rows, int32_t vocab);

cudaError_t launch_sampling(const SamplingBatch& batch, cudaStream_t stream);

// The uniform number in [0, 1) that a row with (seed, sample_index) draws; exposed for tests.
double sampling_uniform(uint64_t seed, int32_t sample_index);

}  // namespace zinfer::gpu::cuda
