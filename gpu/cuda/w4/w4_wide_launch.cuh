// Launch of one token tile's instantiation of the W4A16 GEMM of many rows (w4_wide_kernel.cuh);
// w4_wide_t128.cu and w4_wide_t256.cu compile one each, w4_wide.cu picks it.
#pragma once

#include <atomic>

#include "gpu/cuda/shared_memory_opt_in.cuh"
#include "gpu/cuda/w4/w4_wide_kernel.cuh"

namespace zinfer::gpu::cuda::w4_wide {

template <int kTokens>
cudaError_t launch_tile(const Params& p, dim3 grid, cudaStream_t stream) {
  static std::atomic<uint64_t> opted_in{0};
  const cudaError_t s = opt_in_shared_memory(w4_wide_kernel<kTokens>, opted_in, [](int* out) {
    *out = Tile<kTokens>::kSmemBytes;
    return cudaSuccess;
  });
  if (s != cudaSuccess) return s;
  ProgrammaticLaunch launch(grid, dim3(kThreads), Tile<kTokens>::kSmemBytes, stream, true);
  return cudaLaunchKernelEx(&launch.config, w4_wide_kernel<kTokens>, p);
}

cudaError_t launch_t128(const Params& p, dim3 grid, cudaStream_t stream);
cudaError_t launch_t256(const Params& p, dim3 grid, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda::w4_wide
