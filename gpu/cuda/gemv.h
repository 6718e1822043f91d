// Skinny bf16 GEMM ("GEMV") for decode steps of a few rows: y[m, n] = x[m, k] · W[n, k]^T with
// m <= 8, float32 accumulation, W row-major [n, k] as nn.Linear. At batch 1 a linear layer is a
// pure stream of its weight bytes, so the kernel is built to keep HBM busy: 16-byte streaming
// loads of W (not allocated in L1, so x stays cached), 8-16 of them in flight per thread, two
// blocks of 8 warps per SM, each warp owning whole rows of W (no split-K: every output element is
// summed by one warp in a fixed order, so results do not depend on timing). Alone, at 1-2 rows,
// it streams about as fast as cuBLASLt (0.87-0.95 of copy bandwidth on the 117-235 MB matrices of
// an 8B model, where cuBLASLt's timed choice lands between 0.86 and 1.0 from run to run; 0.71-0.76
// on the 32-50 MB ones, against cuBLASLt's 0.6-0.7); what it adds is the fusion below, which
// removes three kernels per layer. From 4 rows on cuBLASLt's tensor cores win (zinfer-cuda-bench
// gemv).
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
// Every bf16 rounding is where the unfused kernels (rmsnorm.cu, silu_mul.cu) put it, with the
// same float32 expressions, so fusing does not move parity.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

enum class GemvInput { kBf16, kRmsNorm };
enum class GemvOutput { kBf16, kAddToResidual, kSiluMul };

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
  int32_t m = 0, n = 0, k = 0;
};

inline constexpr int32_t kGemvMaxRows = 8;

// Whether launch_gemv handles m rows of length k: m in 1..8, k a multiple of 8, and x (padded
// to 1, 2, 4 or 8 rows) fits in shared memory (k <= 14336 at 8 rows on an H100/H200).
bool gemv_supports(int32_t m, int32_t k);

// With programmatic_launch, the kernel is launched with programmatic stream serialization: it
// may start while the previous kernel in the stream finishes, issues its first weight loads
// (which depend on nothing), and waits for the previous kernel before it reads x.
cudaError_t launch_gemv(const GemvArgs& args, cudaStream_t stream, bool programmatic_launch = true);

}  // namespace zinfer::gpu::cuda
