// A tensor-parallel group as one Backend (gpu/models/tensor_parallel.h says what each rank holds).
// Each rank is a backend of its own on a thread of its own (a CUDA rank's device is current on
// that thread only); the group's backend hands every step to all ranks at once and returns rank
// 0's tokens. The ranks agree on every token without exchanging them: their logits are bitwise
// equal after the gather, and unseeded sampling draws from a seed the group shares.
//
// A rank that throws stops the group: the others are released from their collectives
// (RankGroup::abort, and the hooks' abort for NCCL), the step throws BackendFailure naming the
// rank, and so does every later call.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "gpu/backend.h"
#include "gpu/rank_group.h"

namespace zinfer::gpu {

// What a device adds to a group: per-rank context (a communicator), how to release ranks
// blocked in the device's collectives, and how long the group's threads poll before they sleep.
class RankGroupHooks {
 public:
  virtual ~RankGroupHooks() = default;
  virtual void prepare(RankContext& rank) { (void)rank; }
  virtual void abort() {}
  // How long a thread of the group polls for what it waits for (the next step, the ranks' end
  // of one) before it sleeps on a condition variable. Waking a sleeping thread costs tens of
  // microseconds, twice a step; a device whose ranks' threads only queue work and wait for it
  // (CUDA) gains that by polling. Zero (the default): sleep at once, as a device whose threads
  // compute (the CPU backend) needs its cores.
  virtual std::chrono::microseconds poll() const { return std::chrono::microseconds{0}; }
};

// RankGroupHooks::poll of a device whose ranks' threads only queue work and wait for it (CUDA):
// 20 ms, which covers a decode step of a 70B model at TP 2 (a group idle for longer sleeps), where
// the host's `cores` leave a core to each of the `ranks` pollers and the caller and three to the
// server's other threads; none where they do not (pollers that share a core take turns in
// scheduler time slices, milliseconds each) or the count is unknown (0).
std::chrono::microseconds device_group_polling(unsigned cores, int32_t ranks);

using RankFactory = std::function<std::unique_ptr<Backend>(const RankContext& rank)>;

// Builds `size` ranks with `factory`, each on its own thread. Throws naming the rank that failed.
std::unique_ptr<Backend> make_tensor_parallel_backend(int32_t size, RankFactory factory,
                                                      std::unique_ptr<RankGroupHooks> hooks = nullptr);

}  // namespace zinfer::gpu
