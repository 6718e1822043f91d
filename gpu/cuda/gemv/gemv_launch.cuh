// The launch of the GEMV behind gemv.h: which kernel streams W, its shared memory and grid. Each
// (input, output) variant is instantiated in its own .cu file of this folder, for padded row
// counts 1, 2, 4 and 8, both kernels.
//
// Kernel choice (GemvStreaming::kAuto, gemv_auto_streaming in gemv.h): the bulk-copy ring
// (gemv_ring_kernel.cuh) at one row where x leaves it room, else the register kernel
// (gemv_register_kernel.cuh). Both give the same bits (same split, same summation order).
// (Measured and left out, docs/benchmarks/gpu.md: a cp.async ring of 3 x 4 KB per warp, which
// sped up the plain small matrices but slowed the fused ones and the whole decode step; warps
// prefetching the next GEMV's first weights into L2; a bulk-copy ring per block with a block
// barrier per 16 KB chunk, whose warps wait on each other.)
#pragma once

#include <atomic>
#include <cstdint>

#include "gpu/cuda/gemv/gemv_register_kernel.cuh"
#include "gpu/cuda/gemv/gemv_ring_kernel.cuh"
#include "gpu/cuda/shared_memory_opt_in.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

template <int MT, GemvInput IN, GemvOutput OUT>
cudaError_t launch_ring(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  if (!ring_fits(MT, a.k)) return cudaErrorInvalidValue;
  auto kernel = gemv_ring_kernel<MT, IN, OUT>;
  static std::atomic<uint64_t> opted_in{0};
  const cudaError_t attribute_status = allow_large_shared_memory(kernel, opted_in);
  if (attribute_status != cudaSuccess) return attribute_status;
  ProgrammaticLaunch launch(dim3(grid_blocks(a.n / rows_per_output<OUT>())), dim3(kThreads),
                            ring_shared_bytes(MT, a.k), stream, programmatic_launch);
  return cudaLaunchKernelEx(&launch.config, kernel, params_of(a));
}

template <int MT, GemvInput IN, GemvOutput OUT>
cudaError_t launch_registers(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  auto kernel = gemv_register_kernel<MT, IN, OUT>;
  static std::atomic<uint64_t> opted_in{0};
  const cudaError_t attribute_status = allow_large_shared_memory(kernel, opted_in);
  if (attribute_status != cudaSuccess) return attribute_status;
  ProgrammaticLaunch launch(dim3(grid_blocks(a.n / rows_per_output<OUT>())), dim3(kThreads), x_bytes(MT, a.k), stream,
                            programmatic_launch);
  return cudaLaunchKernelEx(&launch.config, kernel, params_of(a));
}

template <int MT, GemvInput IN, GemvOutput OUT>
cudaError_t launch_padded(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  const GemvStreaming streaming = a.streaming == GemvStreaming::kAuto ? gemv_auto_streaming(a.m, a.k) : a.streaming;
  if (streaming == GemvStreaming::kBulkRing) return launch_ring<MT, IN, OUT>(a, stream, programmatic_launch);
  return launch_registers<MT, IN, OUT>(a, stream, programmatic_launch);
}

// The row count is padded to 1, 2, 4 or 8 (the decode graph buckets); padded rows of x are zero
// and their outputs are not written.
template <GemvInput IN, GemvOutput OUT>
cudaError_t launch_variant(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch) {
  if (a.m <= 1) return launch_padded<1, IN, OUT>(a, stream, programmatic_launch);
  if (a.m <= 2) return launch_padded<2, IN, OUT>(a, stream, programmatic_launch);
  if (a.m <= 4) return launch_padded<4, IN, OUT>(a, stream, programmatic_launch);
  return launch_padded<8, IN, OUT>(a, stream, programmatic_launch);
}

// One per .cu file of this folder (each instantiates its variant's kernels).
cudaError_t launch_bf16_in_bf16_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);
cudaError_t launch_bf16_in_residual_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);
cudaError_t launch_bf16_in_exchange_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);
cudaError_t launch_norm_in_bf16_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);
cudaError_t launch_norm_in_silu_out(const GemvArgs& a, cudaStream_t stream, bool programmatic_launch);

}  // namespace zinfer::gpu::cuda::gemv_detail
