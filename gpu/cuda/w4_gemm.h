// y = x · Wᵀ with W stored as int4 in the tile layout of gpu/quant/int4_tiles.h (GPTQ, AWQ and
// compressed-tensors W4A16 layers, repacked once at load) and x bf16 [m, k], float32
// accumulation. Three ways, chosen by the caller per row count (CudaBackend::Ops::w4_linear):
//   launch_w4_gemm        tensor cores straight from the int4 words (m ≤ 64): each warp owns 16
//                         outputs and a range of inputs; the weights go through registers only,
//                         so a step of a few rows reads a quarter of bf16's bytes. Up to 8 rows
//                         the decode kernel (w4/w4_decode_kernel.cuh: x and the scales staged
//                         once per block, the zero point taken out after the mma), from 9 rows
//                         the chunked kernel (w4/w4_gemm_kernel.cuh: x double-buffered by
//                         chunks). Split over inputs where the outputs alone would not fill the
//                         GPU, the splits' float32 partial sums are added by the block that
//                         finishes last, in split order: the result does not depend on timing.
//   launch_w4_gemm_wide   warpgroup MMA (sm_90a) fed by int4 dequantized in registers, for steps
//                         of more rows (any m), where the row count and shape make it faster
//                         than the other ways (w4_path_plan.h times them all at start-up).
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
  int32_t splits = 0;                // input ranges; 0: w4_gemm_splits (see w4_gemm_launch_splits)
  float* partials = nullptr;         // splits > 1: w4_gemm_workspace_floats
  uint32_t* counters = nullptr;      // splits > 1: w4_gemm_counters, zero, left zero
  int32_t wide_tokens = 0;           // launch_w4_gemm_wide's rows of x per block, 128 or 256; 0: w4_gemm_wide_tokens
};

inline constexpr int32_t kW4GemmMaxRows = 64;

// Whether the layout holds w (n a multiple of 16, k of 64, a group of a multiple of 64) and args
// has its weights, x and the output its kind needs.
inline bool w4_args_complete(const W4GemmArgs& a) {
  const W4Weight& w = a.w;
  if (w.n % 16 != 0 || w.k % 64 != 0 || w.group_size <= 0 || w.group_size % 64 != 0) return false;
  if (a.x == nullptr || w.words == nullptr || w.scales == nullptr || w.zeros == nullptr) return false;
  return a.output == W4Output::kBf16 ? a.y != nullptr : a.residual != nullptr;
}

// The split over inputs launch_w4_gemm uses for (m, n, k) when args.splits is 0.
int32_t w4_gemm_splits(int32_t m, int32_t n, int32_t k);
// The most splits a launch with args.splits = requested runs: requested (or w4_gemm_splits for
// 0), raised where the decode kernel (m ≤ 8) stages a split's x and scales in shared memory and
// one split's inputs would not fit it (the launch may then run one split fewer, rounding a split
// to whole units of two steps). Size the workspace by this.
int32_t w4_gemm_launch_splits(int32_t m, int32_t n, int32_t k, int32_t requested);
// Workspace a launch of (m, n, splits) needs: float32 partial sums, and counters (zeroed once).
size_t w4_gemm_workspace_floats(int32_t m, int32_t n, int32_t splits);
size_t w4_gemm_counters(int32_t n);

// cudaErrorInvalidValue for m outside 1..64, shapes the layout cannot hold, or a missing workspace.
cudaError_t launch_w4_gemm(const W4GemmArgs& args, cudaStream_t stream);
// The same product for any m ≥ 1 on warpgroup MMA (sm_90a), the weights dequantized in registers
// (w4/w4_wide_kernel.cuh): for steps of many rows, in place of launch_w4_dequantize and cuBLASLt.
// x is in packed input order (an act-order layer's x goes through launch_w4_permute first; w.perm
// is not read). Split over inputs (args.splits; 0: w4_gemm_wide_splits) where the output tiles
// alone would not fill the GPU, with the workspace below. cudaErrorInvalidValue for shapes the
// layout cannot hold or a missing workspace.
cudaError_t launch_w4_gemm_wide(const W4GemmArgs& args, cudaStream_t stream);
// Rows of x a block takes (its wgmma's N): 128 up to 128 rows, else 256.
int32_t w4_gemm_wide_tokens(int32_t m);
int32_t w4_gemm_wide_splits(int32_t m, int32_t n, int32_t k, int32_t tokens);
size_t w4_gemm_wide_workspace_floats(int32_t m, int32_t n, int32_t splits, int32_t tokens);
size_t w4_gemm_wide_counters(int32_t m, int32_t n, int32_t tokens);
// The rule w4_gemm_wide_splits applies (host code, tested without a GPU): one split where the
// output tiles fill the device's SMs, else as many as fill them, each at least 4 steps of 64
// inputs.
inline int32_t w4_gemm_wide_split_rule(int32_t output_tiles, int32_t steps, int32_t sms) {
  if (output_tiles >= sms || steps < 8) return 1;
  int32_t splits = sms / output_tiles;
  if (splits > steps / 4) splits = steps / 4;
  return splits < 1 ? 1 : splits;
}
// out: [n, k] bf16, W'[n, k'] = bf16(scale · (q − zero)) at packed input k' (the original input
// perm[k'] for an act-order layer; w.perm is not applied).
cudaError_t launch_w4_dequantize(const W4Weight& w, __nv_bfloat16* out, cudaStream_t stream);
// out[i, k'] = x[i, perm[k']] for i < m: x in the packed order of an act-order layer.
cudaError_t launch_w4_permute(const __nv_bfloat16* x, const int32_t* perm, __nv_bfloat16* out, int32_t m, int32_t k,
                              cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
