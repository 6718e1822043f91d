// Launch of one row-count instantiation of the FP8 GEMV (fp8_gemv_kernel.cuh); each fp8_gemv_m*.cu
// compiles one, fp8_gemv.cu picks it.
#pragma once

#include <atomic>

#include "gpu/cuda/fp8/fp8_gemv_kernel.cuh"
#include "gpu/cuda/shared_memory_opt_in.cuh"

namespace zinfer::gpu::cuda::fp8_gemv_detail {

template <bool GROUPED>
cudaError_t launch(const Params& p, int blocks, size_t smem, cudaStream_t stream) {
  static std::atomic<uint64_t> opted_in{0};
  // The most the device lets a block have, less the kernel's static arrays.
  const cudaError_t s = opt_in_shared_memory(fp8_gemv_kernel<GROUPED>, opted_in, [](int* out) {
    int device = 0, optin = 0;
    cudaFuncAttributes attributes{};
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&attributes, fp8_gemv_kernel<GROUPED>);
    *out = optin - static_cast<int>(attributes.sharedSizeBytes);
    return e;
  });
  if (s != cudaSuccess) return s;
  ProgrammaticLaunch launch(dim3(static_cast<unsigned>(blocks)), dim3(kThreads), smem, stream, true);
  return cudaLaunchKernelEx(&launch.config, fp8_gemv_kernel<GROUPED>, p);
}

}  // namespace zinfer::gpu::cuda::fp8_gemv_detail
