// The CUDA kernels of FP8 W8A8 linear layers (gpu/quant/fp8.h's arithmetic):
//   fp8_quantize.cu  activations bf16 [M, K] (or the gated MLP's silu(gate) · up) -> e4m3 x_q
//                    [M, K] and s_x [M, groups] (or [groups, M], the order cuBLASLt's 1 x 128
//                    block scales take): per token and group, s_x = max(amax, 1e-10) / 448
//                    (dynamic) or the static input scale; x_q = e4m3(x · (1 / s_x)), round to
//                    nearest even, saturating (cuda_fp8.h's __NV_SATFINITE conversion)
//   fp8_gemm.cu      a direct kernel for what neither cuBLASLt's FP8 GEMM nor the mma kernel takes
//                    (K or N not multiples of 16, groups the mma kernel cannot step):
//                    Σ_g s_x[m, g] · s_w[n, g] · Σ_{k ∈ g} x_q · w_q
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// Where the scale of row m, group g goes: s_x[m · groups + g], or s_x[g · M + m].
enum class Fp8ScaleOrder { kByRow, kByGroup };

// static_scale > 0: every s_x is static_scale; else dynamic. The codes go to x_q, and/or widened
// to f16 (exactly) to x_f16 for the mma kernel of fp8_mma.h; either may be null, not both.
cudaError_t launch_fp8_quantize(const __nv_bfloat16* x, int32_t M, int32_t K, int32_t group, float static_scale,
                                __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream, __half* x_f16 = nullptr,
                                Fp8ScaleOrder order = Fp8ScaleOrder::kByRow);

// Which kernel launch_fp8_quantize and launch_fp8_silu_mul_quantize run (fp8_quantize.cu's header
// says why each), for rows of K inputs in groups of `group`, gated (a row is then 2 · K bf16:
// gate, up) or not, with `vectors` whether every 8 inputs move as one 16-byte load (K and group
// multiples of 8, aligned buffers). Host arithmetic only: the launches follow it.
enum class Fp8QuantizeKernel { kTwoPassScalar, kLanes, kRing, kRow, kTwoPassVectors };
struct Fp8QuantizeLaunch {
  Fp8QuantizeKernel kernel = Fp8QuantizeKernel::kTwoPassScalar;
  int32_t threads = 0;  // lanes per item (kLanes), threads per block (kRing, kRow)
  int32_t vectors = 0;  // 16-byte loads a thread holds (kRing, kRow)
  int32_t stages = 0;   // rows the ring holds (kRing)
  bool operator==(const Fp8QuantizeLaunch&) const = default;
};
Fp8QuantizeLaunch fp8_quantize_launch(int32_t K, int32_t group, bool vectors, bool gated);

// x = bf16(silu(gate) · up) as launch_silu_mul computes it from gate_up [M, 2 · inter] (gate in
// columns [0, inter), up in [inter, 2 · inter)), quantized as above (K = inter) without x being
// written: the gated MLP's down projection reads its codes instead of silu_mul's output.
cudaError_t launch_fp8_silu_mul_quantize(const __nv_bfloat16* gate_up, int32_t M, int32_t inter, int32_t group,
                                         float static_scale, __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream,
                                         __half* x_f16 = nullptr, Fp8ScaleOrder order = Fp8ScaleOrder::kByRow);

// x = bf16(rmsnorm(residual) · norm_weight) as launch_rmsnorm computes it, quantized as above with
// one group per row (K inputs): one block per row.
cudaError_t launch_fp8_norm_quantize(const float* residual, const float* norm_weight, float eps, int32_t M, int32_t K,
                                     float static_scale, __nv_fp8_e4m3* x_q, float* s_x, cudaStream_t stream,
                                     __half* x_f16 = nullptr);

// Where a product goes: bf16 [M, N], or added into float32 [M, N].
struct Fp8Output {
  __nv_bfloat16* bf16 = nullptr;
  float* add_f32 = nullptr;
};

// The whole product without cuBLASLt: x_q [M, K], w_q [N, K], s_x [M, G], s_w [N, G], G groups of
// `group` inputs.
cudaError_t launch_fp8_gemm_direct(const __nv_fp8_e4m3* x_q, const float* s_x, const __nv_fp8_e4m3* w_q,
                                   const float* s_w, int32_t M, int32_t N, int32_t K, int32_t group, Fp8Output out,
                                   cudaStream_t stream);

}  // namespace zinfer::gpu::cuda
