// Launch of one MF instantiation of the W4A16 kernel (w4_gemm_kernel.cuh); each .cu file
// w4_gemm_mf*.cu compiles one, w4_gemm.cu picks it.
#pragma once

#include <atomic>

#include "gpu/cuda/shared_memory_opt_in.cuh"
#include "gpu/cuda/w4/w4_gemm_kernel.cuh"

namespace zinfer::gpu::cuda::w4_detail {

template <int MF>
cudaError_t launch_mf(const Params& p, dim3 grid, cudaStream_t stream) {
  static std::atomic<uint64_t> opted_in{0};
  constexpr int bytes = smem_bytes<MF>();
  if constexpr (bytes > 48 * 1024) {
    const cudaError_t s = opt_in_shared_memory(w4_gemm_kernel<MF>, opted_in, [](int* out) {
      *out = bytes;
      return cudaSuccess;
    });
    if (s != cudaSuccess) return s;
  }
  ProgrammaticLaunch launch(grid, dim3(kThreads), bytes, stream, true);
  return cudaLaunchKernelEx(&launch.config, w4_gemm_kernel<MF>, p);
}

// Declared here, defined in w4_gemm_mf{1,2,4,8}.cu.
cudaError_t launch_mf1(const Params& p, dim3 grid, cudaStream_t stream);
cudaError_t launch_mf2(const Params& p, dim3 grid, cudaStream_t stream);
cudaError_t launch_mf4(const Params& p, dim3 grid, cudaStream_t stream);
cudaError_t launch_mf8(const Params& p, dim3 grid, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda::w4_detail
