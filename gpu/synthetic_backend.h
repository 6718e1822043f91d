// The synthetic backend (`[model] device = "synthetic"`): an executor that answers every step at
// once, for measuring the control plane (scheduler, KV manager, messaging) without a model
// (issue 4, "Performance"). It reads the model folder's config.json (shapes, vocabulary, eos ids)
// and no weights. Its KV cache exists only as a geometry: [cache] num_gpu_blocks (required) and
// num_cpu_blocks (0 = as many blocks of the model's shape as swap_space_mb would hold), so the
// scheduler plans over a pool of the size the benchmark asks for. Copies and swaps are checked and
// then ignored; each sampling sequence gets one token, a deterministic function of (seq_id,
// sample_index) that is never an eos id, so requests run until max_tokens or the context length.
#pragma once

#include <memory>

#include "gpu/backend.h"

namespace zinfer::gpu {

// Throws std::invalid_argument when num_gpu_blocks or block_size is not positive, ModelConfigError
// for a bad config.json.
std::unique_ptr<Backend> make_synthetic_backend(const BackendOptions& options);

// The token the synthetic backend samples for a sequence's sample_index-th token: never one of
// eos_token_ids. Exposed so that tests can predict outputs.
int32_t synthetic_token(uint64_t seq_id, int32_t sample_index, const ModelConfig& config);

}  // namespace zinfer::gpu
