// The CPU reference backend: float32 forward over a paged KV cache in host memory, sampling on
// the host. Behaviourally the CUDA backend's twin (same BatchInput semantics, same cache layout).
#pragma once

#include <memory>

#include "gpu/backend.h"
#include "gpu/rank_group.h"

namespace zinfer::gpu::cpu {

// Loads options.model_dir (a rank of a tensor-parallel group loads its shard); throws
// ModelConfigError / SafetensorsError / std::runtime_error.
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options, const RankContext& rank = {});

}  // namespace zinfer::gpu::cpu
