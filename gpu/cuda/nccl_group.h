// The NCCL side of a tensor-parallel group of GPUs (gpu/tensor_parallel_backend.h): one
// communicator per rank, created together for devices 0..N-1 of this process, and the two
// collectives the CUDA ops need. NCCL's all-reduce hands every rank the same reduced bytes, which
// keeps the ranks' logits, and so their sampled tokens, equal.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "gpu/backend.h"
#include "gpu/cuda/device_memory.h"

namespace zinfer::gpu::cuda {

// data[n] = sum over ranks, in place, on `stream` (capturable in a CUDA graph).
void nccl_all_reduce_sum(void* comm, float* data, size_t n, cudaStream_t stream);
// out[ranks, n] = every rank's in[n], on `stream`.
void nccl_all_gather(void* comm, const float* in, float* out, size_t n, cudaStream_t stream);

// `bytes` of device memory registered with every rank's as one symmetric NCCL window (each rank
// calls this at the same point with the same size: the registration is collective). All-reduces
// in place on such a buffer run NCCL's symmetric-memory kernels, whose latency on small messages
// (a decode step's residual: a few KB per token) is a fraction of the ring's; the decode step
// runs two per layer. `window`, if given, receives the window (ncclWindow_t) for NCCL's device API.
DeviceBuffer nccl_symmetric_buffer(void* comm, size_t bytes, const char* what, void** window = nullptr);

}  // namespace zinfer::gpu::cuda
