// Launch of one MF instantiation of the W4A16 decode kernel (w4_decode_kernel.cuh); each
// w4_decode_mf*.cu compiles one, w4_gemm.cu picks it.
#pragma once

#include "gpu/cuda/w4/w4_decode_kernel.cuh"

namespace zinfer::gpu::cuda::w4_decode {

// Shared memory a block may take: under the 48 KB that needs no opt-in, and four blocks (32
// warps) fit an SM's 228 KB.
constexpr int kMaxSmem = 48 * 1024;
constexpr int kBlocksPerSm = 4;
constexpr int kDepth = 4;

// The most steps of 64 inputs a split may hold at m rows (with a scale per step: a unit of two
// steps needs less).
inline int32_t max_steps(int32_t m, int mf) {
  int32_t s = 1;
  while (smem_bytes(s + 1, 1, m, mf) <= kMaxSmem) ++s;
  return s;
}

// Splits of k / 64 steps: as many as the SMs hold blocks (kBlocksPerSm each) beside the outputs'
// blocks, so that no block waits for a second wave, then as many more as keep a split's staging
// within kMaxSmem; every split but the last has the same steps.
inline int32_t splits(int32_t m, int32_t n, int32_t k, int sms, int mf) {
  const int32_t blocks = output_blocks(n, kWarps), steps = k / 64;
  int32_t count = std::clamp(kBlocksPerSm * sms / blocks, 1, std::max(steps, 1));
  const int32_t per = std::min((steps + count - 1) / count, max_steps(m, mf));
  return (steps + per - 1) / per;
}

// Steps that share a scale: 2 where every group is a multiple of 128 inputs (then so is K).
inline int unit_steps(const W4Weight& w) { return w.group_size % 128 == 0 ? 2 : 1; }

// Whether a split of S steps refills a ring slot after the step's products (the kernel's kLate):
// from four turns of the ring on. Refilling at the step's start keeps the next load earliest,
// which a split of a few steps needs (its ring is most of it), but the words must then be copied
// out of the slot first; on long splits the late refill without the copies is faster (gate_up at
// 1-8 rows, docs/benchmarks/quantization.md).
inline bool late_refill(int32_t S) { return S >= 4 * kDepth; }

// p.steps_per_split must be a multiple of unit_steps(p.w).
template <int MF>
cudaError_t launch(const Params& p, dim3 grid, cudaStream_t stream) {
  const int P = unit_steps(p.w);
  const int bytes = smem_bytes(p.steps_per_split, P, p.m, MF);
  if (p.steps_per_split % P != 0 || bytes > kMaxSmem) return cudaErrorInvalidValue;
  ProgrammaticLaunch launch(grid, dim3(kThreads), bytes, stream, true);
  if (late_refill(p.steps_per_split))
    return P == 2 ? cudaLaunchKernelEx(&launch.config, w4_decode_kernel<MF, 2, kDepth, true>, p)
                  : cudaLaunchKernelEx(&launch.config, w4_decode_kernel<MF, 1, kDepth, true>, p);
  return P == 2 ? cudaLaunchKernelEx(&launch.config, w4_decode_kernel<MF, 2, kDepth, false>, p)
                : cudaLaunchKernelEx(&launch.config, w4_decode_kernel<MF, 1, kDepth, false>, p);
}

cudaError_t launch_mf1(const Params& p, dim3 grid, cudaStream_t stream);

}  // namespace zinfer::gpu::cuda::w4_decode
