// y = x · Wᵀ with W stored as int4 in the tile layout of gpu/quant/int4_tiles.h (GPTQ, AWQ and
// compressed-tensors W4A16 layers, repacked once at load) and x bf16 [m, k], float32
// accumulation. Two ways, chosen by the caller per row count (w4_linear.h decides):
//   launch_w4_gemm        tensor cores straight from the int4 words (m ≤ 64): each warp owns 16
//                         outputs and a range of inputs; the weights go through registers only,
//                         so a step of a few rows reads a quarter of bf16's bytes. Split over
//                         inputs where the outputs alone would not fill the GPU, the splits'
//                         float32 partial sums are added by the block that finishes last, in split
//                         order: the result does not depend on timing.
//   launch_w4_dequantize  W back to bf16 [n, k] in the packed input order (then cuBLASLt, with x
//                         through launch_w4_permute for act-order layers), for steps of many rows
//                         where the product, not the weight bytes, is the cost.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// One int4 layer on the device (device pointers into the layout of Int4Tiles).
struct W4Weight {
  const uint4* words = nullptr;     // [n/16][k/64][32][4] uint32
  const float* scales = nullptr;    // [groups, n]
  const uint32_t* zeros = nullptr;  // [groups, n]
  const int32_t* perm = nullptr;    // [k] or null
  int32_t n = 0, k = 0, group_size = 0;
};

enum class W4Output { kBf16, kAddToResidual };

struct W4GemmArgs {
  W4Weight w;
  const __nv_bfloat16* x = nullptr;  // [m, k]
  W4Output output = W4Output::kBf16;
  __nv_bfloat16* y = nullptr;        // kBf16: [m, n]
  float* residual = nullptr;         // kAddToResidual: [m, n] float32, y added to it
  int32_t m = 0;
  int32_t splits = 0;                // input ranges; 0: w4_gemm_splits
  float* partials = nullptr;         // splits > 1: w4_gemm_workspace_floats
  uint32_t* counters = nullptr;      // splits > 1: w4_gemm_counters, zero, left zero
};

inline constexpr int32_t kW4GemmMaxRows = 64;

// The split over inputs launch_w4_gemm uses for (m, n, k) when args.splits is 0.
int32_t w4_gemm_splits(int32_t m, int32_t n, int32_t k);
// Workspace a launch of (m, n, splits) needs: float32 partial sums, and counters (zeroed once).
size_t w4_gemm_workspace_floats(int32_t m, int32_t n, int32_t splits);
size_t w4_gemm_counters(int32_t n);

// cudaErrorInvalidValue for m outside 1..64, shapes the layout cannot hold, or a missing workspace.
cudaError_t launch_w4_gemm(const W4GemmArgs& args, cudaStream_t stream);
// out: [n, k] bf16, W'[n, k'] = bf16(scale · (q − zero)) at packed input k' (the original input
// perm[k'] for an act-order layer; w.perm is not applied).
cudaError_t launch_w4_dequantize(const W4Weight& w, __nv_bfloat16* out, cudaStream_t stream);
// out[i, k'] = x[i, perm[k']] for i < m: x in the packed order of an act-order layer.
cudaError_t launch_w4_permute(const __nv_bfloat16* x, const int32_t* perm, __nv_bfloat16* out, int32_t m, int32_t k,
                              cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
