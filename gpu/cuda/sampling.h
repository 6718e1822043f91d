// Token sampling from float32 logits, one block per row: greedy (temperature 0), or temperature
// with top-k then top-p (the order transformers applies them), drawn with a counter-based random
// number from (seed, sample_index) so that a seeded sequence samples the same tokens whatever the
// batch it is in. logprob = log_softmax(raw logits)[token]; optional top logprobs.
// Two kernels: each row's maximum, first argmax and sum of exp(logit - max) come from
// sampling_stat_blocks(vocab) blocks per row (slices of 4,096 logits, one pass), whose partial
// results the per-row kernel combines. At batch 1 the vocabulary (128K logits for Llama-3) is
// then read by 32 SMs instead of one SM reading it twice, which left that one SM's bandwidth,
// not the card's, as the bound of a decode step's sampling.
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
  // Workspace: [num_rows, sampling_stat_blocks(vocab), 3] 32-bit words (the statistics' partials).
  float* scratch = nullptr;
};

int32_t sampling_stat_blocks(int32_t vocab);
size_t sampling_scratch_bytes(int32_t num_rows, int32_t vocab);

cudaError_t launch_sampling(const SamplingBatch& batch, cudaStream_t stream);

// The uniform number in [0, 1) that a row with (seed, sample_index) draws; exposed for tests.
double sampling_uniform(uint64_t seed, int32_t sample_index);

}  // namespace zinfer::gpu::cuda
