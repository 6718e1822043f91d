// Asynchronous copies into shared memory and the barriers that say when they have landed, raw
// PTX (.cu only; sm_80 for cp.async, sm_90 for mbarrier transaction counts and cp.async.bulk).
// Shared by the kernels that stream through shared-memory rings: the decode attention
// (cp.async groups per warp), the prefill attention (cp.async completing on mbarriers) and the
// GEMV (cp.async.bulk completing on mbarriers).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace zinfer::gpu::cuda {

// Shared-memory address as PTX's .shared state space wants it (32 bits).
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- cp.async (16 bytes per thread) ------------------------------------------------------------

// 16-byte async copy global -> shared; src_bytes = 0 writes 16 zero bytes instead (rows past
// the end of a sequence, so that masked rows are 0, never stale NaNs).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
// One arrival on the barrier once all of this thread's earlier cp.async have landed (.noinc:
// it counts as one of the barrier's expected arrivals).
__device__ __forceinline__ void cp_async_arrive(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// ---- mbarrier -------------------------------------------------------------------------------

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the other threads' arrives (and to the copies).
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival that also tells the barrier to wait for `bytes` more of transactions (the bulk
// copies that complete on it) before its phase can end.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Whether the barrier phase of the given parity has completed (try_wait may suspend the thread
// for a short, hardware-chosen time before it answers no).
__device__ __forceinline__ bool mbar_ready(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      " selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Waits until the barrier phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  while (!mbar_ready(bar, parity)) {
  }
}

// ---- cp.async.bulk (the TMA engine, one thread per copy) ----------------------------------------

// bytes (a multiple of 16, both addresses 16-byte aligned) global -> shared by the bulk copy
// engine, completing as `bytes` transactions on the barrier (armed by mbar_arrive_expect_tx).
// One instruction keeps the whole request in flight without a register or a load slot per 16
// bytes.
__device__ __forceinline__ void bulk_copy_to_shared(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

}  // namespace zinfer::gpu::cuda
