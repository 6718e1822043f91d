// The device side of residual_exchange.h: what a pushing GEMV does with an ExchangeView. Every
// element travels with its exchange's number in one 8-byte store (value in the low half, the
// number's low 32 bits in the high half), which is single-copy atomic: a reader that sees the
// number sees the value, so no fence or flag orders anything.
#pragma once

#include <cstdint>

#include "gpu/cuda/residual_exchange.h"

namespace zinfer::gpu::cuda::exchange_detail {

__device__ __forceinline__ uint64_t load_relaxed_sys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed_sys(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ uint64_t load_relaxed_gpu(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// The number of this rank's last exchange. Read after the previous kernel is waited for: the
// push that wrote it ended before (kernels in between wait for their predecessors).
__device__ __forceinline__ uint64_t last_pushed(const ExchangeView& v) { return load_relaxed_gpu(v.pushed); }

// Rank s's slot of exchange e in a staging area.
__device__ __forceinline__ size_t slot_offset(const ExchangeView& v, uint64_t e, int s) {
  return (static_cast<size_t>(e & 1) * v.size + s) * v.capacity;
}

__device__ __forceinline__ uint64_t tagged(uint64_t e, float value) {
  return (e << 32) | __float_as_uint(value);
}

// The pushing kernel's element i of its partial, into its slot of every rank's staging area.
__device__ __forceinline__ void push(const ExchangeView& v, size_t own_slot, uint64_t e, int64_t i, float value) {
  const uint64_t word = tagged(e, value);
  for (int r = 0; r < v.size; ++r) store_relaxed_sys(v.stage[r] + own_slot + i, word);
}

// A pushing block has started (thread 0, once every thread of the block has read the number of
// the last exchange, behind a block barrier): the grid's last block to start records e as the
// last exchange. Not sooner: a block may start after another has ended (the kernel before still
// holds SMs), and it must read the number before e. The next push reads it after this grid ended.
__device__ __forceinline__ void block_started(const ExchangeView& v, uint64_t e) {
  uint32_t before;  // acq_rel: every block's read of pushed comes before the last block's write
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(v.started_blocks) : "memory");
  if (before != gridDim.x - 1) return;
  *v.started_blocks = 0;
  *v.pushed = e;
}

// residual[i] += every rank's element i of exchange e, in rank order, each waited for until it
// carries e (or the group was aborted). The abort flag is host memory (a PCIe round trip): it is
// read every 1,024 polls only.
__device__ __forceinline__ void settle(const ExchangeView& v, uint64_t e, float* residual, int64_t i) {
  const uint64_t* half = v.stage[v.rank] + slot_offset(v, e, 0);
  const uint32_t tag = static_cast<uint32_t>(e);
  float r = residual[i];
  for (int s = 0; s < v.size; ++s) {
    const uint64_t* element = half + static_cast<size_t>(s) * v.capacity + i;
    uint64_t word = load_relaxed_sys(element);
    for (uint32_t polls = 1; static_cast<uint32_t>(word >> 32) != tag; ++polls) {
      if (polls % 1024 == 0 && *v.aborted != 0) break;
      word = load_relaxed_sys(element);
    }
    r += __uint_as_float(static_cast<uint32_t>(word));
  }
  residual[i] = r;
}

}  // namespace zinfer::gpu::cuda::exchange_detail
