// Launch of one MF instantiation of the FP8 mma kernel (fp8_mma_kernel.cuh); each fp8_mma_mf*.cu
// compiles one, fp8_mma.cu picks it.
#pragma once

#include <atomic>

#include "gpu/cuda/fp8/fp8_mma_kernel.cuh"
#include "gpu/cuda/shared_memory_opt_in.cuh"

namespace zinfer::gpu::cuda::fp8_detail {

template <int MF, int CHUNK>
cudaError_t opt_in() {
  static std::atomic<uint64_t> opted_in{0};
  return opt_in_shared_memory(fp8_mma_kernel<MF, CHUNK>, opted_in, [](int* out) {
    *out = smem_bytes<MF, CHUNK>();
    return cudaSuccess;
  });
}

// Blocks of the instantiation one SM holds at once (the grid is sized to one wave of them).
template <int MF, int CHUNK>
int resident_blocks() {
  static const int blocks = [] {
    int n = 0;
    if (opt_in<MF, CHUNK>() != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fp8_mma_kernel<MF, CHUNK>, kThreads, smem_bytes<MF, CHUNK>()) !=
            cudaSuccess)
      return 1;
    return n > 0 ? n : 1;
  }();
  return blocks;
}

template <int MF, int CHUNK>
cudaError_t launch_mf(const Params& p, dim3 grid, cudaStream_t stream) {
  const cudaError_t s = opt_in<MF, CHUNK>();
  if (s != cudaSuccess) return s;
  ProgrammaticLaunch launch(grid, dim3(kThreads), smem_bytes<MF, CHUNK>(), stream, true);
  return cudaLaunchKernelEx(&launch.config, fp8_mma_kernel<MF, CHUNK>, p);
}

struct Instance {
  cudaError_t (*launch)(const Params& p, dim3 grid, cudaStream_t stream);
  int (*resident)();
};
Instance instance_mf1();
Instance instance_mf2();
Instance instance_mf4();
Instance instance_mf8();

}  // namespace zinfer::gpu::cuda::fp8_detail
