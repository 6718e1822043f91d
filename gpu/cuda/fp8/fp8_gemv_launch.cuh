// Launch of one instantiation of the FP8 GEMV (fp8_gemv_kernel.cuh): fp8_gemv_channel.cu and
// fp8_gemv_block.cu compile one each, fp8_gemv.cu picks it.
#pragma once

#include <atomic>

#include "gpu/cuda/fp8/fp8_gemv_kernel.cuh"
#include "gpu/cuda/shared_memory_opt_in.cuh"

namespace zinfer::gpu::cuda::fp8_gemv_detail {

template <bool GROUPED>
cudaError_t launch(const Params& p, int blocks, size_t smem, cudaStream_t stream) {
  static std::atomic<uint64_t> opted_in{0};
  const cudaError_t s = allow_large_shared_memory(fp8_gemv_kernel<GROUPED>, opted_in);
  if (s != cudaSuccess) return s;
  ProgrammaticLaunch launch(dim3(static_cast<unsigned>(blocks)), dim3(kThreads), smem, stream, true);
  return cudaLaunchKernelEx(&launch.config, fp8_gemv_kernel<GROUPED>, p);
}

}  // namespace zinfer::gpu::cuda::fp8_gemv_detail
