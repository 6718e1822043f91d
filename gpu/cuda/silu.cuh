// SiLU(gate) · up in float32, the one expression of the gated MLP's activation that every kernel
// computing it uses (silu_mul.cu, the GEMV's epilogue, the FP8 quantization of the down
// projection's input), so that they all give the same bits from the same bf16 gate and up.
//
// gate · σ(gate) · up with σ from the hardware's exp2 and reciprocal approximations (__expf,
// __fdividef: about 2 ulp each, which the bf16 rounding of the result hides but for rare ties).
// The IEEE expf and division took a third of the fused FP8 quantization's time (instructions, not
// HBM, bound that kernel). For gate below about -87, 1 + e^-gate is past 2^126 or infinite and the
// quotient is 0, as SiLU is there in float32.
#pragma once

namespace zinfer::gpu::cuda {

__device__ __forceinline__ float silu_times(float gate, float up) { return __fdividef(gate, 1.f + __expf(-gate)) * up; }

}  // namespace zinfer::gpu::cuda
