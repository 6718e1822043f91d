// The GEMV that streams W with bulk copies (cp.async.bulk, the TMA engine) into a shared-memory
// ring per warp. Why: on Hopper a read-only stream of bulk copies outruns one of 16-byte register
// loads (zinfer-cuda-bench gemv, read_only_*), the register GEMV stays below the copy rate on an
// 8B model's matrices, and a decode step at batch 1 is shorter with this kernel (the figures are
// in docs/benchmarks/gpu.md).
//
// Each warp owns its rows as in gemv_common.cuh and has kStages private 2 KB slots, one
// mbarrier each. Lane 0 issues step s's batch (a 2 KB piece of one row, or the row's shorter
// tail) into slot s % kStages with one bulk copy that completes on the slot's barrier; the warp
// waits on that barrier (phase parity (s / kStages) & 1), copies the slot into registers (4
// conflict-free 16-byte reads per lane), and after a __syncwarp lane 0 refills the slot with step
// s + kStages. No block-wide barrier: a warp never waits for another (a first version with one
// ring per block, its warps meeting at a barrier per chunk, streamed well below copy). The first
// kStages batches are issued before the wait for the previous kernel (they depend on nothing it
// writes).
//
// Four 2 KB slots per warp: 8 KB in flight per warp, 128 KB per SM, as the register kernel's two
// 4 KB batches. Of the rings of this kernel measured in the decode step, none was faster (three
// 2 KB slots were even): with two 4 KB slots the first piece a warp waits for is twice the size
// and slots are refilled at a coarser grain; larger rings make the blocks too large for the next
// kernel's blocks to fit beside them; 1 KB slots are far slower (docs/benchmarks/gpu.md).
//
// Shared memory: [8 warps][kStages][2 KB] ring then x [MT, K] bf16; ring_fits says whether that
// leaves room for two blocks per SM (else the register kernel runs). The request is padded so
// that no more than two blocks of this kernel fit on an SM: at 64-92 registers per thread three
// would, and the block scheduler then puts three on some SMs and one on others, whose warps share
// uneven bandwidth (the padding raised every shape's rate, docs/benchmarks/gpu.md). The register
// kernel is held to two blocks by its registers.
#pragma once

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/gemv/gemv_common.cuh"
#include "gpu/cuda/programmatic_launch.cuh"

namespace zinfer::gpu::cuda::gemv_detail {

constexpr int kRingLoads = 4;                       // 16-byte chunks per lane per slot
constexpr int kSlotBytes = 32 * kRingLoads * 16;    // 2 KB
constexpr int kStages = 4;                          // slots per warp: 8 KB in flight
constexpr int kRingBytes = kWarps * kStages * kSlotBytes;

template <int MT, GemvInput IN, GemvOutput OUT>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) gemv_ring_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float reduce[kWarps][MT];
  __shared__ __align__(8) uint64_t full[kWarps][kStages];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const WarpRows<OUT, kRingLoads> rows(p, warp);
  const int steps = rows.steps;
  unsigned char* ring = smem + warp * kStages * kSlotBytes;
  auto* xs = reinterpret_cast<__nv_bfloat16*>(smem + kRingBytes);  // [MT, K] bf16
  auto slot_of = [&](int step) { return ring + (step % kStages) * kSlotBytes; };
  auto barrier_of = [&](int step) { return smem_u32(&full[warp][step % kStages]); };
  auto issue = [&](int step) {  // lane 0 only
    const uint32_t bytes = static_cast<uint32_t>(rows.batch_chunks(step)) * 16u;
    const uint32_t bar = barrier_of(step);
    mbar_arrive_expect_tx(bar, bytes);
    bulk_copy_to_shared(smem_u32(slot_of(step)), rows.batch_start(p, step), bytes, bar);
  };
  if (lane == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(smem_u32(&full[warp][s]), 1);
    mbar_init_fence();
    for (int s = 0; s < kStages && s < steps; ++s) issue(s);
  }
  __syncwarp();
  wait_for_previous_kernel();
  const ExchangeSlot exchange = exchange_slot<OUT>(p);
  stage_input<MT, IN>(p, xs, reduce);
  __syncthreads();
  allow_next_kernel();
  exchange_started<OUT>(p, exchange);

  float acc[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) acc[m] = 0.f;
  float gate = 0.f;  // kSiluMul: lane m's gate total of the current pair
  const uint4* xs4 = reinterpret_cast<const uint4*>(xs);
  for (int s = 0; s < steps; ++s) {
    mbar_wait(barrier_of(s), static_cast<uint32_t>((s / kStages) & 1));
    const uint4* slot = reinterpret_cast<const uint4*>(slot_of(s));
    const int n = rows.batch_chunks(s);
    uint4 w[kRingLoads];
#pragma unroll
    for (int u = 0; u < kRingLoads; ++u) w[u] = lane + u * 32 < n ? slot[lane + u * 32] : make_uint4(0, 0, 0, 0);
    __syncwarp();  // every lane has read the slot before lane 0 refills it
    if (lane == 0 && s + kStages < steps) issue(s + kStages);
    accumulate_batch<MT>(acc, w, xs4, rows.k, rows.batch_first_chunk(s), rows.chunks, lane);
    if (rows.last_batch(s)) finish_row<MT, OUT>(p, acc, lane, rows.output(s), rows.outputs, rows.half(s), gate, exchange);
  }
  finish_block<OUT>(p, exchange);
}

// Whether the ring and x (padded_rows of length k) leave room for kBlocksPerSm blocks per SM,
// next to the kernel's static shared memory (reduction scratch and barriers) and what the driver
// reserves per block.
inline bool ring_fits(int padded_rows, int k) {
  static const int per_block = shared_memory_per_block(kBlocksPerSm);
  const size_t static_bytes = sizeof(float) * kWarps * padded_rows + sizeof(uint64_t) * kWarps * kStages;
  return static_bytes + kRingBytes + x_bytes(padded_rows, k) <= static_cast<size_t>(std::max(per_block, 0));
}

// Dynamic shared memory of a launch: the ring and x, or just over a third of the SM's shared
// memory if that is more, so that kBlocksPerSm + 1 blocks never fit.
inline size_t ring_shared_bytes(int padded_rows, int k) {
  static const int one_too_many = shared_memory_per_block(kBlocksPerSm + 1) + 1;
  return std::max(kRingBytes + x_bytes(padded_rows, k), static_cast<size_t>(std::max(one_too_many, 0)));
}

}  // namespace zinfer::gpu::cuda::gemv_detail
