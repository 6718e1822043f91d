// The GEMV that streams W through registers: each lane issues its 8 16-byte loads of a batch
// straight into registers, double-buffered, so 8-16 loads (128-256 bytes) per lane are in flight:
// 64-128 KB per SM, above what the copy rate times the loaded HBM latency needs spread over the
// SMs. It needs no shared memory beyond x, so it takes every shape gemv.h accepts; the
// ring kernel (gemv_ring_kernel.cuh) streams faster where x leaves it room.
#pragma once

#include "gpu/cuda/gemv/gemv_common.cuh"
#include "gpu/cuda/streamed_load.cuh"
#include "gpu/cuda/programmatic_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

constexpr int kRegisterLoads = 8;  // 16-byte loads per lane per batch (4 KB per warp)

// Weight bytes are read exactly once (streamed_load.cuh).
__device__ __forceinline__ uint4 load_weights(const __nv_bfloat16* p) { return load_streamed(p); }

template <int MT, GemvInput IN, GemvOutput OUT>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) gemv_register_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float reduce[kWarps][MT];
  auto* xs = reinterpret_cast<__nv_bfloat16*>(smem);  // [MT, K] bf16
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const WarpRows<OUT, kRegisterLoads> rows(p, warp);

  auto load = [&](uint4 (&buf)[kRegisterLoads], int step) {
    const __nv_bfloat16* start = rows.batch_start(p, step);
    const int n = rows.batch_chunks(step);
#pragma unroll
    for (int u = 0; u < kRegisterLoads; ++u) {
      const int c = lane + u * 32;
      buf[u] = c < n ? load_weights(start + c * 8) : make_uint4(0, 0, 0, 0);
    }
  };
  float acc[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) acc[m] = 0.f;
  float gate = 0.f;  // kSiluMul: lane m's gate total of the current pair
  ExchangeSlot exchange;
  auto consume = [&](const uint4 (&buf)[kRegisterLoads], int step) {
    accumulate_batch<MT>(acc, buf, reinterpret_cast<const uint4*>(xs), rows.k, rows.batch_first_chunk(step),
                         rows.chunks, lane);
    if (rows.last_batch(step)) finish_row<MT, OUT>(p, acc, lane, rows.output(step), rows.outputs, rows.half(step), gate,
                                               exchange);
  };

  uint4 wa[kRegisterLoads], wb[kRegisterLoads];
  // The first two batches of weights are requested before waiting for the previous kernel: they
  // depend on nothing it writes, so they stream in while it finishes (after short kernels such
  // as the decode attention, this block may have started on an idle SM long before).
  const int steps = rows.steps;
  if (steps > 0) load(wa, 0);
  if (steps > 1) load(wb, 1);
  wait_for_previous_kernel();
  exchange = exchange_slot<OUT>(p);
  stage_input<MT, IN>(p, xs, reduce);
  __syncthreads();
  allow_next_kernel();
  exchange_started<OUT>(p, exchange);
  for (int s = 0; s < steps; s += 2) {
    if (s > 0 && s + 1 < steps) load(wb, s + 1);
    consume(wa, s);
    if (s + 1 < steps) {
      if (s + 2 < steps) load(wa, s + 2);
      consume(wb, s + 1);
    }
  }
  finish_block<OUT>(p, exchange);
}

}  // namespace zinfer::gpu::cuda::gemv_detail
