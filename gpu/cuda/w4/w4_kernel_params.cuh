// What launch_w4_gemm passes to both W4A16 kernels of few rows (the decode kernel of
// w4_decode_kernel.cuh, the chunked kernel of w4_gemm_kernel.cuh): one struct, filled once.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "gpu/cuda/w4_gemm.h"

namespace zinfer::gpu::cuda {

struct W4KernelParams {
  W4Weight w;
  const __nv_bfloat16* x;
  W4Output output;
  __nv_bfloat16* y;
  float* residual;
  int32_t m;
  int32_t splits;
  int32_t steps_per_split;  // 64-input steps per split
  float* partials;
  uint32_t* counters;
};

}  // namespace zinfer::gpu::cuda
