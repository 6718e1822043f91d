// FP8 W8A8 products of few rows (decode steps) on tensor cores, from the weights as the checkpoint
// and cuBLASLt keep them: w [N, K] e4m3 row-major, s_w [N, groups] float32 (gpu/quant/fp8.h's
// arithmetic). x comes as its e4m3 codes widened to f16 (exact: e4m3 ⊂ f16), so the mma is
// f16 × f16 with float32 accumulation, and each product of two codes is exact; a group's sum is
// scaled once by s_x[m, g] · s_w[n, g].
//
// Each warp owns 16 outputs; per 64-input step a lane loads 16 contiguous bytes of its two rows r
// and r + 8 (one 16-byte load each, straight from HBM into registers: a warp's load covers whole
// 64-byte row pieces, so every fetched sector is used) and feeds them to four m16n8k16 mma. The
// inputs are permuted inside the step so that the bytes a lane loads are the A fragments it needs:
// in sub-tile kk the lane's mma inputs 2t, 2t+1, 2t+8, 2t+9 are the step's inputs
// 16t + 4kk + 0..3; the x fragments follow the same permutation (one 8-byte shared load). Split
// over inputs where the outputs alone would not fill the GPU (skinny_mma.cuh).
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/fp8_kernels.h"

namespace zinfer::gpu::cuda {

struct Fp8MmaArgs {
  const __nv_fp8_e4m3* w = nullptr;  // [n, k]
  const float* s_w = nullptr;        // [n, groups]
  const __half* x = nullptr;         // [m, k]: x_q as f16
  const float* s_x = nullptr;        // [m, groups]
  int32_t m = 0, n = 0, k = 0;
  int32_t group = 0;                 // k (one group) or a multiple of 64
  Fp8Output out;
  int32_t splits = 0;                // input ranges; 0: fp8_mma_splits
  float* partials = nullptr;         // splits > 1: fp8_mma_workspace_floats
  uint32_t* counters = nullptr;      // splits > 1: fp8_mma_counters, zero, left zero
};

inline constexpr int32_t kFp8MmaMaxRows = 64;

// Shapes the kernel takes: n a multiple of 16, k of 64, one group or groups of a multiple of 64.
bool fp8_mma_supports(int32_t n, int32_t k, int32_t group);
int32_t fp8_mma_splits(int32_t m, int32_t n, int32_t k);
size_t fp8_mma_workspace_floats(int32_t m, int32_t n, int32_t splits);
size_t fp8_mma_counters(int32_t n);
// cudaErrorInvalidValue for m outside 1..64, an unsupported shape or a missing workspace.
cudaError_t launch_fp8_mma(const Fp8MmaArgs& args, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
