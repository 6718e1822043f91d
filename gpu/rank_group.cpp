#include "gpu/rank_group.h"

#include <algorithm>
#include <cstring>

namespace zinfer::gpu {

RankGroup::RankGroup(int32_t size) : size_(size), inputs_(size > 0 ? size : 0), values_(size > 0 ? size : 0) {
  if (size < 1) throw std::invalid_argument("a rank group needs at least one rank");
}

void RankGroup::barrier() {
  std::unique_lock lock(mu_);
  if (aborted_) throw RankGroupAborted(why_);
  const uint64_t gen = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
  if (generation_ == gen) throw RankGroupAborted(why_);
}

void RankGroup::abort(const std::string& why) {
  std::lock_guard lock(mu_);
  if (aborted_) return;
  aborted_ = true;
  why_ = why;
  cv_.notify_all();
}

bool RankGroup::aborted() const {
  std::lock_guard lock(mu_);
  return aborted_;
}

void RankGroup::all_reduce_sum(int32_t rank, float* data, size_t n) {
  if (size_ == 1) return;
  // Phase 1: publish. Rank 0 alone sizes the scratch, before anyone reads it.
  inputs_[rank] = data;
  if (rank == 0 && scratch_.size() < n) scratch_.resize(n);
  barrier();
  // Phase 2: each rank sums its slice over all ranks, in rank order.
  const size_t begin = n * rank / size_, end = n * (rank + 1) / size_;
  for (size_t i = begin; i < end; ++i) {
    float s = inputs_[0][i];
    for (int32_t r = 1; r < size_; ++r) s += inputs_[r][i];
    scratch_[i] = s;
  }
  barrier();
  // Phase 3: everyone copies the sums back; the last barrier keeps the scratch until all have.
  std::memcpy(data, scratch_.data(), n * sizeof(float));
  barrier();
}

void RankGroup::all_gather(int32_t rank, const float* in, size_t n, float* out) {
  inputs_[rank] = in;
  barrier();
  for (int32_t r = 0; r < size_; ++r) std::memcpy(out + static_cast<size_t>(r) * n, inputs_[r], n * sizeof(float));
  barrier();
}

int64_t RankGroup::all_reduce_min(int32_t rank, int64_t value) {
  values_[rank] = value;
  barrier();
  const int64_t m = *std::min_element(values_.begin(), values_.end());
  barrier();
  return m;
}

}  // namespace zinfer::gpu
