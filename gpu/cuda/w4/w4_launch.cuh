// Launch of one MF instantiation of the W4A16 kernel (w4_gemm_kernel.cuh); each .cu file
// w4_gemm_mf*.cu compiles one, w4_gemm.cu picks it.
#pragma once

#include <atomic>

#include "gpu/cuda/shared_memory_opt_in.cuh"
#include "gpu/cuda/w4/w4_gemm_kernel.cuh"

namespace zinfer::gpu::cuda::w4_detail {

template <int MF, int CHUNK>
cudaError_t opt_in() {
  static std::atomic<uint64_t> opted_in{0};
  return opt_in_shared_memory(w4_gemm_kernel<MF, CHUNK>, opted_in, [](int* out) {
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
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, w4_gemm_kernel<MF, CHUNK>, kThreads, smem_bytes<MF, CHUNK>()) !=
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
  return cudaLaunchKernelEx(&launch.config, w4_gemm_kernel<MF, CHUNK>, p);
}

// One instantiation: its launch and its resident blocks per SM. Defined in w4_gemm_mf*.cu.
struct Instance {
  cudaError_t (*launch)(const Params& p, dim3 grid, cudaStream_t stream);
  int (*resident)();
};
Instance instance_mf2_c256();
Instance instance_mf4_c256();
Instance instance_mf8_c256();

}  // namespace zinfer::gpu::cuda::w4_detail
