// The ranks of a tensor-parallel group as threads of one process, and the collectives they run
// through shared memory: the CPU backend's all-reduce and all-gather, and the host-side agreement
// every backend needs before it sizes its KV cache (the smallest free memory across ranks).
// A collective is entered by every rank with the same sizes; each returns once all have arrived.
// Sums are taken in rank order by one rank per slice, so every rank ends with the same bits (the
// ranks then sample the same token from the same logits).
//
// abort() ends the group: collectives waiting or entered later throw RankGroupAborted, so a rank
// that failed cannot leave the others waiting for it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/models/weight_store.h"

namespace zinfer::gpu {

class RankGroupAborted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RankGroup {
 public:
  explicit RankGroup(int32_t size);
  int32_t size() const { return size_; }

  // data[n] = the sum over ranks of their data[n].
  void all_reduce_sum(int32_t rank, float* data, size_t n);
  // out[size, n] = every rank's in[n], in rank order (out may not alias in).
  void all_gather(int32_t rank, const float* in, size_t n, float* out);
  // The smallest value any rank passed.
  int64_t all_reduce_min(int32_t rank, int64_t value);

  // Wakes every waiting rank with RankGroupAborted; `why` is their message. Idempotent.
  void abort(const std::string& why);
  bool aborted() const;

 private:
  void barrier();  // throws RankGroupAborted

  const int32_t size_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int32_t arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  std::string why_;
  std::vector<const float*> inputs_;  // per rank, published for the collective in progress
  std::vector<float> scratch_;        // the reduced values
  std::vector<int64_t> values_;       // per rank, for all_reduce_min
};

}  // namespace zinfer::gpu

namespace zinfer::gpu {

// What one rank's backend is told about its group (a group of one when group is null).
struct RankContext {
  int32_t rank = 0;
  RankGroup* group = nullptr;
  uint64_t seed = 0;          // the group's seed for unseeded sampling: every rank draws alike
  int32_t device = 0;         // CUDA: the rank's device
  void* nccl_comm = nullptr;  // CUDA: the rank's NCCL communicator (ncclComm_t)
  // CUDA: the group's abort flag, host memory mapped into every device (nonzero once the group
  // aborted): kernels that wait for their peers poll it (gpu/cuda/residual_exchange.h).
  const volatile uint32_t* abort_flag = nullptr;
  int32_t size() const { return group == nullptr ? 1 : group->size(); }
  models::TensorParallel parallel() const { return {rank, size()}; }
};

}  // namespace zinfer::gpu
