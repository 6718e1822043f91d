// The W4A16 GEMM of w4_gemm.h for steps of many rows (launch_w4_gemm_wide): warpgroup MMA
// (wgmma m64n128k16) with the int4 weights dequantized in registers as its A operand, so that
// no bf16 copy of W is written or read. Layouts are those of gpu/quant/int4_tiles.h.
//
// Work: a block owns 128 outputs × 128 or 256 rows of x (the wgmma's N, Tile) over one split of the inputs
// (64-input steps). Two consumer warpgroups compute, warpgroup g the outputs 64g..64g+63 (warp
// w of it supplies the A rows of one 16-output tile); a producer warpgroup fills the ring. The
// int4 tile layout already holds each lane's mma.m16n8k16 A fragment, and wgmma's register A
// fragment is that layout per warp, so a lane's 16-byte word of a step is its four k16
// fragments after one shift and one lop3 each. Both consumer warpgroups read the same x tile:
// x, not the weights, is most of what a block reads at these row counts (16 KB of x per step
// against 4 KB of int4), so a block is as wide in outputs as its registers allow.
//
// Why a producer: a consumer's wgmma.fence waits for every register write the warp has in
// flight, loads included, so a consumer that prefetched its own weights into registers (or
// kept cp.async groups in flight) paid a whole memory latency per step. The producer's cp.async
// copies complete on the slot's "full" mbarrier instead (no proxy fence: the barrier's wait
// orders them before the wgmma reads, as in the prefill attention kernel); consumers release a
// slot on its "empty" barrier once the wgmma that read it has retired.
//
// Ring slot (Tile::kSlotBytes, 1,024-byte aligned: the swizzle's period): x[rows][64 inputs] bf16
// in the 128-byte swizzle wgmma reads (rows past m zero); the block's int4 words of the step
// (8 tiles × 512 bytes, consumer thread t's 16 bytes at t · 16); the step's group's scales
// (float) and zeros (uint32) of the block's 128 outputs (zero past n).
//
// Splits: where the output tiles alone would not fill the GPU, blockIdx.z splits the inputs; the
// splits' float32 totals are added by the block that finishes last, in split order, so the
// result does not depend on timing.
//
// Numbers: A = bf16(q − zero) · bf16(scale), rounded once more (Marlin's bf16 arithmetic): the
// weights as bf16 like the dequantized copy this kernel replaces, but with the group's scale
// rounded to bf16 first. The products sum in float32 across all inputs in the wgmma
// accumulator, with no wait between steps.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/async_copy.cuh"
#include "gpu/cuda/attention_prefill_sm90.cuh"
#include "gpu/cuda/programmatic_launch.cuh"
#include "gpu/cuda/w4/w4_dequantize.cuh"
#include "gpu/cuda/w4_gemm.h"

namespace zinfer::gpu::cuda::w4_wide {

constexpr int kConsumerThreads = 256;  // two warpgroups
constexpr int kProducerThreads = 128;  // one warpgroup (setmaxnreg works per warpgroup)
constexpr int kThreads = kConsumerThreads + kProducerThreads;
constexpr int kOutputs = 128;          // 64 per consumer warpgroup: the wgmma's M
constexpr int kWordBytes = kConsumerThreads * 16;
constexpr int kTableBytes = kOutputs * 4;  // scales or zeros of the block's outputs

// The block's rows of x (the wgmma's N): 128, or 256 for steps of more rows (each step's x then
// feeds twice the products per int4 word dequantized and per byte of x read).
template <int kTokens>
struct Tile {
  static_assert(kTokens == 128 || kTokens == 256);
  static constexpr int kXBytes = kTokens * 128;          // x[kTokens][64] bf16, 128-byte rows
  static constexpr int kSlotBytes = kXBytes + 5 * 1024;  // x, words (4 KB), two tables (1 KB)
  static constexpr int kStages = kTokens == 128 ? 8 : 5;
  static constexpr int kAcc = kTokens / 2;  // a consumer thread's float32 accumulators
  // The ring, its barriers, and 1 KB of slack to align the dynamic shared memory's start.
  static constexpr int kSmemBytes = kStages * kSlotBytes + 2 * kStages * 8 + 1024;
  static_assert(kXBytes + kWordBytes + 2 * kTableBytes <= kSlotBytes && kSlotBytes % 1024 == 0);
};

struct Params {
  W4GemmArgs a;             // a.w.perm is not read: x is in packed input order; a.partials (splits
                            // > 1): [splits][tiles][kConsumerThreads][Tile::kAcc]
  int32_t steps_per_split;  // 64-input steps per blockIdx.z
};

template <int kTokens>
struct Ring {
  using T = Tile<kTokens>;
  uint32_t base;  // slot 0
  __device__ uint32_t slot(int i) const { return base + (i % T::kStages) * T::kSlotBytes; }
  __device__ uint32_t full(int i) const { return base + T::kStages * T::kSlotBytes + (i % T::kStages) * 8; }
  __device__ uint32_t empty(int i) const {
    return base + T::kStages * T::kSlotBytes + (T::kStages + i % T::kStages) * 8;
  }
  __device__ static uint32_t parity(int i) { return static_cast<uint32_t>((i / T::kStages) & 1); }
};

// The producer warpgroup: step first + i into slot i, once the consumers have released the
// slot's previous step; each thread's copies complete on the slot's full barrier. A thread's
// copies are the same places of every step, 64 inputs on: their addresses are worked out once
// (the producer's issue rate, not the memory's, bounded the kernel when each copy computed its
// own address).
template <int kTokens>
__device__ __forceinline__ void produce(const Params& p, const Ring<kTokens>& ring, int32_t first, int32_t count,
                                        int32_t m0) {
  constexpr int kXBytes = Tile<kTokens>::kXBytes, kStages = Tile<kTokens>::kStages;
  constexpr int kXCopies = kTokens * 8 / kProducerThreads;        // rows t/8 + 16j, chunk t%8
  constexpr int kWordCopies = kConsumerThreads / kProducerThreads;  // consumers t + 128j
  constexpr int kPieces = kTableBytes / 16;
  const int t = threadIdx.x - kConsumerThreads;
  const int32_t N = p.a.w.n, K = p.a.w.k, steps = K / 64, ntiles = N / 16, per_group = p.a.w.group_size / 64;
  const int row0 = t / 8, chunk = t % 8;
  const __nv_bfloat16* x_src =
      p.a.x + static_cast<size_t>(m0 + row0) * K + chunk * 8 + static_cast<size_t>(first) * 64;
  const size_t x_stride = static_cast<size_t>(kTokens / kXCopies) * K;
  const uint32_t x_dst = static_cast<uint32_t>(row0 * 128 + ((chunk ^ (row0 & 7)) << 4));
  uint32_t x_valid = 0;
#pragma unroll
  for (int j = 0; j < kXCopies; ++j) x_valid |= (m0 + row0 + j * (kTokens / kXCopies) < p.a.m ? 1u : 0u) << j;
  const uint4* w_src[kWordCopies];
  bool w_valid[kWordCopies];
#pragma unroll
  for (int j = 0; j < kWordCopies; ++j) {
    const int c = t + j * kProducerThreads;
    const int32_t tile = blockIdx.x * (kOutputs / 16) + c / 32;
    w_valid[j] = tile < ntiles;
    w_src[j] = p.a.w.words + (static_cast<size_t>(w_valid[j] ? tile : 0) * steps + first) * 32 + c % 32;
  }
  const int table = t / kPieces, piece = t % kPieces;
  const int32_t n = blockIdx.x * kOutputs + piece * 4;
  const bool t_valid = t < 2 * kPieces && n < N;
  const char* t_src =
      table == 0 ? reinterpret_cast<const char*>(p.a.w.scales) : reinterpret_cast<const char*>(p.a.w.zeros);
  t_src += (t_valid ? static_cast<size_t>(n) : 0) * 4;
  const uint32_t t_dst = kXBytes + kWordBytes + table * kTableBytes + piece * 16;

  size_t group = static_cast<size_t>(first / per_group);
  int32_t in_group = first % per_group;
  for (int32_t i = 0; i < count; ++i) {
    if (i >= kStages) mbar_wait(ring.empty(i), Ring<kTokens>::parity(i) ^ 1u);
    const uint32_t slot = ring.slot(i);
#pragma unroll
    for (int j = 0; j < kXCopies; ++j) {
      const bool valid = (x_valid >> j) & 1u;
      const __nv_bfloat16* src = valid ? x_src + j * x_stride : p.a.x;
      cp_async16(slot + x_dst + j * (kTokens / kXCopies) * 128, src, valid ? 16u : 0u);
    }
#pragma unroll
    for (int j = 0; j < kWordCopies; ++j)
      cp_async16(slot + kXBytes + (t + j * kProducerThreads) * 16, w_src[j], w_valid[j] ? 16u : 0u);
    if (t < 2 * kPieces) cp_async16(slot + t_dst, t_valid ? t_src + group * N * 4 : t_src, t_valid ? 16u : 0u);
    if (++in_group == per_group) ++group, in_group = 0;
    cp_async_arrive(ring.full(i));
    x_src += 64;
#pragma unroll
    for (int j = 0; j < kWordCopies; ++j) w_src[j] += 32;
  }
}

__device__ __forceinline__ void release(uint32_t bar) {
  __syncwarp();
  if (threadIdx.x % 32 == 0) mbar_arrive(bar);
}

// One step (slot i): dequantize the lane's word into a (free: its last wgmma has retired), issue
// the four wgmma into acc, and release slot i - 1 once its wgmma has retired.
template <int kTokens>
__device__ __forceinline__ void run_step(const Ring<kTokens>& ring, const unsigned char* ring_ptr, int i,
                                         uint32_t (&a)[16], float (&acc)[Tile<kTokens>::kAcc]) {
  using T = Tile<kTokens>;
  constexpr int kXBytes = T::kXBytes;
  const int lane = threadIdx.x % 32;
  mbar_wait(ring.full(i), Ring<kTokens>::parity(i));
  const unsigned char* slot = ring_ptr + (i % T::kStages) * T::kSlotBytes;
  const uint4 words = *reinterpret_cast<const uint4*>(slot + kXBytes + threadIdx.x * 16);
  const auto* scales = reinterpret_cast<const float*>(slot + kXBytes + kWordBytes);
  const auto* zeros = reinterpret_cast<const uint32_t*>(slot + kXBytes + kWordBytes + kTableBytes);
  const int row = (threadIdx.x / 32) * 16 + lane / 4;  // among the block's outputs
  const uint32_t zr = zeros[row], zr8 = zeros[row + 8];
  const uint32_t sr = w4_bf16x2(scales[row]), sr8 = w4_bf16x2(scales[row + 8]);
  w4_dequantize_scaled(words.x, zr, zr8, sr, sr8, &a[0]);
  w4_dequantize_scaled(words.y, zr, zr8, sr, sr8, &a[4]);
  w4_dequantize_scaled(words.z, zr, zr8, sr, sr8, &a[8]);
  w4_dequantize_scaled(words.w, zr, zr8, sr, sr8, &a[12]);
  sm90::fence_regs(a);
  sm90::wgmma_fence();
  const uint32_t xs = ring.slot(i);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const uint64_t desc = sm90::make_smem_desc(xs + kk * 32, 16, 1024);
    if constexpr (kTokens == 128) sm90::wgmma_m64n128k16_rs(acc, &a[4 * kk], desc, i > 0 || kk > 0);
    else sm90::wgmma_m64n256k16_rs(acc, &a[4 * kk], desc, i > 0 || kk > 0);
  }
  sm90::wgmma_commit();
  sm90::wgmma_wait<1>();  // step i - 1's wgmma (the other register set, its slot) retired
  sm90::fence_regs(acc);
  if (i > 0) release(ring.empty(i - 1));
}

// Barrier of the consumer warpgroups only (the producer may have left).
__device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumerThreads) : "memory");
}

// Splits > 1: writes this split's totals, and returns true in the block that counts last, its
// totals then the sum of every split's in split order.
template <int kTotalFloats>
__device__ __forceinline__ bool sum_splits(const Params& p, float (&total)[kTotalFloats], uint32_t* last_block) {
  const int32_t splits = static_cast<int32_t>(gridDim.z);
  const size_t tiles = static_cast<size_t>(gridDim.x) * gridDim.y, tile = blockIdx.y * gridDim.x + blockIdx.x;
  auto slot = [&](int32_t split) {
    return reinterpret_cast<float4*>(p.a.partials +
                                     ((split * tiles + tile) * kConsumerThreads + threadIdx.x) * kTotalFloats);
  };
  float4* mine = slot(static_cast<int32_t>(blockIdx.z));
#pragma unroll
  for (int i = 0; i < kTotalFloats / 4; ++i)
    mine[i] = make_float4(total[4 * i], total[4 * i + 1], total[4 * i + 2], total[4 * i + 3]);
  // Every thread's partials, then one release: the barrier orders them before thread 0's fence,
  // whose cumulativity carries them to the block that counts last.
  consumers_sync();
  if (threadIdx.x == 0) {
    __threadfence();
    const uint32_t done = atomicAdd(p.a.counters + tile, 1u);
    *last_block = done == static_cast<uint32_t>(splits - 1);
    if (*last_block) p.a.counters[tile] = 0;
  }
  consumers_sync();
  if (!*last_block) return false;
  __threadfence();
#pragma unroll
  for (int i = 0; i < kTotalFloats; ++i) total[i] = 0.f;
  for (int32_t s = 0; s < splits; ++s) {
    const float4* part = slot(s);
#pragma unroll
    for (int i = 0; i < kTotalFloats / 4; ++i) {
      const float4 v = __ldcg(part + i);
      total[4 * i] += v.x, total[4 * i + 1] += v.y, total[4 * i + 2] += v.z, total[4 * i + 3] += v.w;
    }
  }
  return true;
}

template <int kTokens>
__device__ __forceinline__ void consume(const Params& p, const Ring<kTokens>& ring, const unsigned char* ring_ptr,
                                        int32_t count, int32_t m0, uint32_t* last_block) {
  constexpr int kAcc = Tile<kTokens>::kAcc;
  const int32_t N = p.a.w.n;
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.f;
  uint32_t a0[16], a1[16];
  int32_t i = 0;
  for (; i + 1 < count; i += 2) {
    run_step(ring, ring_ptr, i, a0, acc);
    run_step(ring, ring_ptr, i + 1, a1, acc);
  }
  if (i < count) run_step(ring, ring_ptr, i, a0, acc);
  sm90::wgmma_wait<0>();
  allow_next_kernel();

  if (gridDim.z > 1 && !sum_splits(p, acc, last_block)) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t tile = blockIdx.x * (kOutputs / 16) + warp;
  if (tile >= N / 16) return;
  const int32_t n_r = tile * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < kAcc / 4; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int32_t m = m0 + 8 * j + 2 * (lane % 4) + (e & 1);
      const int32_t n = n_r + (e >> 1) * 8;
      if (m >= p.a.m) continue;
      const size_t at = static_cast<size_t>(m) * N + n;
      if (p.a.output == W4Output::kBf16) p.a.y[at] = __float2bfloat16(acc[4 * j + e]);
      else p.a.residual[at] += acc[4 * j + e];
    }
}

template <int kTokens>
__global__ void __launch_bounds__(kThreads, 1) w4_wide_kernel(Params p) {
  constexpr int kStages = Tile<kTokens>::kStages;
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint32_t last_block;
  const uint32_t raw = smem_u32(smem_raw);
  const Ring<kTokens> ring{(raw + 1023u) & ~1023u};
  const unsigned char* ring_ptr = smem_raw + (ring.base - raw);

  const int32_t steps = p.a.w.k / 64, m0 = blockIdx.y * kTokens;
  const int32_t first = blockIdx.z * p.steps_per_split, count = max(0, min(steps, first + p.steps_per_split) - first);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(ring.full(s), kProducerThreads);
      mbar_init(ring.empty(s), kConsumerThreads / 32);
    }
    mbar_init_fence();
  }
  __syncthreads();
  wait_for_previous_kernel();  // x (and the residual) come from the kernels before

  // 384 threads leave 168 registers each; the producer needs few, so it hands its share to the
  // consumers (8 warps × 224 + 4 warps × 56 = the SM's 64K registers, less 1K).
  if (threadIdx.x >= kConsumerThreads) {
    sm90::setmaxnreg_dec<56>();
    produce(p, ring, first, count, m0);
  } else {
    sm90::setmaxnreg_inc<224>();
    consume(p, ring, ring_ptr, count, m0, &last_block);
  }
}

}  // namespace zinfer::gpu::cuda::w4_wide
