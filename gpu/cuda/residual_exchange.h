// The all-reduce of a tensor-parallel decode step's residual, done by the row-parallel GEMV itself.
//
// Why: at one or two decode tokens the residual is 16-32 KB and a layer's two all-reduces are
// latency, not bandwidth. A kernel of their own between two GEMVs (NCCL's, or a one-shot kernel
// over peer memory) costs about 6 us at TP 2 on H200s; the GEMVs' weight stream stops for it
// twice a layer (zinfer-cuda-bench exchange; docs/benchmarks/tensor-parallel.md). Here the
// exchange lives in memory NCCL maps for every rank (a symmetric window, ncclMemAlloc +
// ncclCommWindowRegister, each rank's address from NCCL's device API), and the row-parallel
// GEMV (o, down; gemv.h, GemvOutput::kExchange) all-reduces block by block. Every rank runs the
// same GEMV over the same output rows, each row summed by one warp; the warp that finishes row j
//   1. writes its partial sum P_r[j] into slot [half][r] of every rank's staging area, together
//      with the exchange's number e in one 8-byte store (as NCCL's LL protocol pairs data and
//      flag): a reader that sees e sees the value, with no fence, flag or barrier in between;
// and at the block's end its threads take the block's rows one each:
//   2. wait until every rank's slot of the row carries e, then residual + P_0 + P_1 + ... in
//      rank order: every rank gets the same bits, those of the NCCL path's (residual + P_0) + P_1.
// When the grid ends the residual is whole: the next kernel reads it as on one GPU, and nothing
// ran between the two GEMVs. A thread waits only for its row's values, which its peers' blocks
// for the same rows send as they finish; the blocks of a grid are resident at once (two per SM),
// so no wait holds up a peer.
// The exchange numbers are this rank's count of pushes, kept on the device (a CUDA graph replays
// frozen arguments); the ranks run the same steps, so their numbers agree. The staging area
// alternates halves by parity: a rank writes half (e & 1) into its peers during exchange e only
// after its exchange e - 1 ended, which took every peer's values of e - 1, which each peer sent
// after its exchange e - 2, the last reader of that half, had ended (a kernel waits for the one
// before it). A slot's 32 bits of e can repeat only after 2^32 exchanges: the backend clears the
// staging area before that (ResidualExchange::reset).
//
// A rank that fails leaves its peers waiting for its values: the group's abort flag (host memory
// mapped into every device) ends every wait, and the group fails the step
// (gpu/tensor_parallel_backend.h).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "gpu/cuda/device_memory.h"

namespace zinfer::gpu::cuda {

inline constexpr int kExchangeMaxRanks = 8;

// What the kernels get (by value). Every pointer is an address on this rank's device.
struct ExchangeView {
  uint64_t* stage[kExchangeMaxRanks] = {};    // rank r's staging: [2 halves][size ranks][capacity] (e << 32 | value)
  uint64_t* pushed = nullptr;                 // this rank's: the number of its last exchange
  uint32_t* started_blocks = nullptr;         // this rank's: blocks of the current push that started
  const volatile uint32_t* aborted = nullptr; // the group's, host-mapped: nonzero ends every wait
  int32_t rank = 0, size = 1;
  uint32_t capacity = 0;                      // elements per (half, rank) slot
};

class ResidualExchange {
 public:
  // Whether every rank of `comm`'s group of `size` can load and store every other's memory (NCCL's
  // LSA team is the whole group: GPUs of one host over NVLink or peer-to-peer PCIe). Where not,
  // NCCL's all-reduce does the decode steps too. The same answer on every rank.
  static bool possible(void* comm, int32_t size);
  // Collective: every rank of `comm` constructs its exchange at the same point with the same
  // capacity (the window registration is a collective call). `aborted` is the group's flag
  // (pinned, mapped), as a device address.
  ResidualExchange(void* comm, int32_t rank, int32_t size, size_t capacity, const volatile uint32_t* aborted);
  ~ResidualExchange();
  ResidualExchange(const ResidualExchange&) = delete;
  ResidualExchange& operator=(const ResidualExchange&) = delete;

  const ExchangeView& view() const { return view_; }
  // Whether an exchange of n floats fits a slot.
  bool fits(size_t n) const { return n <= view_.capacity; }
  // The exchanges run since the last reset (every rank's backend counts the same steps); past
  // kExchangesBeforeReset (half the range of a slot's 32 bits of e, far more than any step
  // runs), the backend calls reset() before its next step.
  void count(uint64_t exchanges) { issued_ += exchanges; }
  bool needs_reset() const { return issued_ >= kExchangesBeforeReset; }
  // Clears the staging area and the exchange count (synchronously). Every rank at the same point,
  // between steps, none of them running one (their pushes write into each other's areas).
  void reset();
  static constexpr uint64_t kExchangesBeforeReset = uint64_t{1} << 31;

 private:
  DeviceBuffer window_;    // staging and flags, symmetric across the group
  DeviceBuffer counters_;  // pushed, started_blocks
  ExchangeView view_;
  uint64_t issued_ = 0;  // exchanges since the last reset
};

// The group's abort flag: pinned host memory mapped into every device's address space.
class ExchangeAbortFlag {
 public:
  ExchangeAbortFlag();
  ~ExchangeAbortFlag();
  ExchangeAbortFlag(const ExchangeAbortFlag&) = delete;
  ExchangeAbortFlag& operator=(const ExchangeAbortFlag&) = delete;
  void raise();
  const volatile uint32_t* device() const { return device_; }

 private:
  volatile uint32_t* host_ = nullptr;
  const volatile uint32_t* device_ = nullptr;
};

}  // namespace zinfer::gpu::cuda
