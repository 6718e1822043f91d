// The CUDA backend: make_backend() calls make_cuda_backend() when the build has CUDA.
#pragma once

#include <memory>

#include "gpu/backend.h"

namespace zinfer::gpu {

// Loads options.model_dir onto CUDA device 0. Throws std::runtime_error with a clear message
// (no device, unsupported architecture/dtype/head size, bad checkpoint, out of memory).
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options);

// tensor_parallel_size GPUs (devices 0..N-1), one rank each, over NCCL (gpu/tensor_parallel_backend.h);
// with `random_config`, that config's shapes with seeded random weights (each rank fills its shard).
std::unique_ptr<Backend> make_cuda_tensor_parallel_backend(const BackendOptions& options,
                                                           const ModelConfig* random_config = nullptr,
                                                           uint64_t seed = 0);

// For benchmarks: a backend with config's shapes and seeded random bf16 weights generated on the
// device (options.model_dir is not read); tensor-parallel when options say so.
std::unique_ptr<Backend> make_cuda_backend_random(const BackendOptions& options, const ModelConfig& config,
                                                  uint64_t seed);

}  // namespace zinfer::gpu
