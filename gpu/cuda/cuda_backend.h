// The CUDA backend: make_backend() calls make_cuda_backend() when the build has CUDA.
#pragma once

#include <memory>

#include "gpu/backend.h"

namespace zinfer::gpu {

// Loads options.model_dir onto CUDA device 0. Throws std::runtime_error with a clear message
// (no device, unsupported architecture/dtype/head size, bad checkpoint, out of memory).
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options);

// For benchmarks: a backend with config's shapes and seeded random bf16 weights generated on the
// device (options.model_dir is not read).
std::unique_ptr<Backend> make_cuda_backend_random(const BackendOptions& options, const ModelConfig& config,
                                                  uint64_t seed);

}  // namespace zinfer::gpu
