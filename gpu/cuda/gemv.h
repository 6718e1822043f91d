// Skinny bf16 GEMM ("GEMV") for decode steps of a few rows: y[m, n] = x[m, k] · W[n, k]^T with
// m <= 8, float32 accumulation, W row-major [n, k] as nn.Linear. At batch 1 a linear layer is a
// pure stream of its weight bytes, so the kernel is built to keep HBM busy: two blocks of 8 warps
// per SM, each warp owning whole rows of W (no split-K: every output element is summed by one
// warp in a fixed order, so results do not depend on timing), its batches of W streamed by
// bulk copies (the TMA engine) into a shared-memory ring per warp, or, where x leaves no room for
// that ring, by 16-byte loads into registers (gemv/gemv_launch.cuh). At 1 row the ring streams an
// 8B model's matrices at least as close to the copy bandwidth as cuBLASLt does; what the GEMV
// adds is the fusion below, which removes three kernels per layer. From 4 rows on cuBLASLt's
// tensor cores win (zinfer-cuda-bench gemv; the figures are in docs/benchmarks/gpu.md).
//
// The input x is staged once per block in shared memory as bf16, and that staging can absorb the
// RMSNorm that precedes the qkv and gate_up projections:
//   kBf16:    x as given, [m, k] bf16
//   kRmsNorm: x = bf16(residual * rsqrt(mean(residual^2) + eps) * norm_weight)
//             residual: [m, k] float32, norm_weight: [k] float32
// and the output can absorb the kernel that follows:
//   kBf16:          y: [m, n] bf16
//   kAddToResidual: residual_out[i, j] += y[i, j], residual_out: [m, n] float32 (the o and down
//                   projections; float32 as cuBLASLt's accumulating path for larger steps)
//   kSiluMul:       act[i, j] = bf16(silu(bf16(y[i, j])) * bf16(y[i, n/2 + j])), act: [m, n/2]
//                   bf16 (the gate_up projection, gate rows [0, n/2), up rows [n/2, n); one warp
//                   computes both rows of a pair)
//   kExchange:      residual_out[i, j] += the sum over the ranks of a tensor-parallel group of
//                   their y[i, j] (row-parallel o and down), each element sent to every rank
//                   as its warp finishes it and summed at the block's end (residual_exchange.h)
// Every bf16 rounding is where the unfused kernels (rmsnorm.cu, silu_mul.cu) put it, with the
// same float32 expressions, so fusing does not move parity.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/residual_exchange.h"

namespace zinfer::gpu::cuda {

enum class GemvInput { kBf16, kRmsNorm };
enum class GemvOutput { kBf16, kAddToResidual, kSiluMul, kExchange };
// How W is streamed: 16-byte loads into registers, or bulk copies into a shared-memory ring per
// warp. kAuto takes gemv_auto_streaming's choice; the other two force one kernel (tests and
// benchmarks compare them). Both give the same bits.
enum class GemvStreaming { kAuto, kRegisters, kBulkRing };

struct GemvArgs {
  GemvInput input = GemvInput::kBf16;
  GemvOutput output = GemvOutput::kBf16;
  const __nv_bfloat16* x = nullptr;        // kBf16: [m, k]
  const float* norm_residual = nullptr;    // kRmsNorm: [m, k] float32
  const float* norm_weight = nullptr;      // kRmsNorm: [k] float32
  float norm_eps = 1e-6f;
  const __nv_bfloat16* w = nullptr;        // [n, k] bf16
  __nv_bfloat16* y_bf16 = nullptr;         // kBf16: [m, n]; kSiluMul: [m, n / 2]
  float* residual_out = nullptr;           // kAddToResidual: [m, n] float32
  const ExchangeView* exchange = nullptr;  // kExchange: the rank's exchange ([m, n] fits a slot)
  int32_t m = 0, n = 0, k = 0;
  GemvStreaming streaming = GemvStreaming::kAuto;
};

// The two fused shapes a decode layer runs (cuda_forward.cpp; the benchmarks time the same):
// y = rmsnorm(residual) · w^T, output kBf16 (qkv) or kSiluMul (gate_up), with n rows of w
// and k = the residual's width;
inline GemvArgs normed_gemv_args(const float* residual, const float* norm_weight, float eps, const __nv_bfloat16* w,
                                 __nv_bfloat16* y, GemvOutput output, int32_t m, int32_t n, int32_t k) {
  GemvArgs g;
  g.input = GemvInput::kRmsNorm;
  g.output = output;
  g.norm_residual = residual;
  g.norm_weight = norm_weight;
  g.norm_eps = eps;
  g.w = w;
  g.y_bf16 = y;
  g.m = m, g.n = n, g.k = k;
  return g;
}
// and residual[m, n] += x[m, k] · w^T (o, down).
inline GemvArgs residual_gemv_args(const __nv_bfloat16* x, const __nv_bfloat16* w, float* residual, int32_t m,
                                   int32_t n, int32_t k) {
  GemvArgs g;
  g.output = GemvOutput::kAddToResidual;
  g.x = x;
  g.w = w;
  g.residual_out = residual;
  g.m = m, g.n = n, g.k = k;
  return g;
}

// and residual[m, n] += the group's x[m, k] · w^T, each rank's x and w its slices of a
// row-parallel layer, through the rank's residual exchange.
inline GemvArgs exchange_gemv_args(const __nv_bfloat16* x, const __nv_bfloat16* w, const ExchangeView& exchange,
                                   float* residual, int32_t m, int32_t n, int32_t k) {
  GemvArgs g;
  g.output = GemvOutput::kExchange;
  g.x = x;
  g.w = w;
  g.exchange = &exchange;
  g.residual_out = residual;
  g.m = m, g.n = n, g.k = k;
  return g;
}

inline constexpr int32_t kGemvMaxRows = 8;

// Whether launch_gemv handles m rows of length k: m in 1..8, k a multiple of 8, and x (padded
// to 1, 2, 4 or 8 rows) fits in shared memory (k <= 14336 at 8 rows on Hopper, 227 KB per block).
bool gemv_supports(int32_t m, int32_t k);

// Whether x (m rows of length k, padded) leaves room for the bulk-copy ring: 8 KB of slots per
// warp at two blocks per SM (on Hopper, 228 KB per SM: k <= 24936 at 1 row, 12464 at 2,
// 6224 at 4, 3104 at 8).
bool gemv_ring_fits(int32_t m, int32_t k);

// What kAuto runs: the ring at one row where it fits, the register kernel otherwise. At one row
// the ring streams each of a layer's fused GEMVs at least as fast as the register kernel; at two
// rows it is no faster (the figures, Llama-3-8B's shapes, are in docs/benchmarks/gpu.md).
GemvStreaming gemv_auto_streaming(int32_t m, int32_t k);

// cudaErrorInvalidValue for shapes gemv_supports rejects, and for kBulkRing where the ring does
// not fit.
// With programmatic_launch, the kernel is launched with programmatic stream serialization: it
// may start while the previous kernel in the stream finishes, issues its first weight loads
// (which depend on nothing), and waits for the previous kernel before it reads x.
cudaError_t launch_gemv(const GemvArgs& args, cudaStream_t stream, bool programmatic_launch = true);

}  // namespace zinfer::gpu::cuda
