// FP8 W8A8 products of one row (decode steps of one sequence) in one kernel: the
// activation's quantization (from bf16 x, from rmsnorm(residual), or from the gated MLP's
// silu(gate) · up) is the kernel's prologue, so a decode layer runs no quantization kernels and
// no RMSNorm or SiLU kernels beside its four products, as the bf16 path's fused GEMV (gemv.h).
// The arithmetic is gpu/quant/fp8.h's: x_q, s_x as fp8_kernels.h computes them (dynamic per token,
// or per token and 128-input group for block-wise layers, or the static input scale), then
//   y[m, n] = Σ_g s_x[m, g] · s_w[n, g] · Σ_{k ∈ g} x_q · w_q
// with each product of two codes exact and the sums in float32 (f16 tensor-core MMAs of the
// widened codes, float32 accumulators); outputs bf16, or added into float32 (the residual).
//
// Why a kernel of its own: at one row the quantization kernel and the mma kernel (fp8_mma.h) of
// each product took 1.5-2.5× the weight bytes' time (docs/benchmarks/quantization.md). This one
// streams W as the bf16 GEMV does, bulk copies into a ring per warp (fp8_gemv_kernel.cuh says how).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/fp8_kernels.h"

namespace zinfer::gpu::cuda {

enum class Fp8GemvInput {
  kBf16,   // x [m, k] bf16
  kNorm,   // x = bf16(rmsnorm(residual [m, k] float32) · norm_weight [k] float32), as rmsnorm.cu rounds it
  kGated,  // x = bf16(silu(gate) · up) of gate_up [m, 2k] bf16 (gate in columns [0, k)), as silu_mul.cu
};

struct Fp8GemvArgs {
  Fp8GemvInput input = Fp8GemvInput::kBf16;
  const __nv_bfloat16* x = nullptr;    // kBf16: x; kGated: gate_up
  const float* residual = nullptr;     // kNorm
  const float* norm_weight = nullptr;  // kNorm
  float eps = 0;                       // kNorm
  const __nv_fp8_e4m3* w = nullptr;    // [n, k] row-major, as the checkpoint and cuBLASLt keep it
  const float* s_w = nullptr;          // [n, groups]
  int32_t m = 0, n = 0, k = 0;
  int32_t group = 0;                   // k (one group per row) or 128 (block-wise)
  float static_scale = 0;              // > 0: every s_x; else dynamic
  Fp8Output out;
};

inline constexpr int32_t kFp8GemvMaxRows = 1;

// Whether the kernel takes a product (host arithmetic only): m = 1, n a multiple of 8, k a
// multiple of 64 up to 16,384 (the prologue holds the row in registers), one group per row or
// groups of 128, and its shared memory within two blocks per SM of a Hopper GPU.
bool fp8_gemv_supports(int32_t m, int32_t n, int32_t k, int32_t group);

// cudaErrorInvalidValue for what fp8_gemv_supports refuses or a missing pointer.
cudaError_t launch_fp8_gemv(const Fp8GemvArgs& args, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
