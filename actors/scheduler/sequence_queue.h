// A queue of sequences (waiting or swapped out) in the policy's order: increasing key, ties to
// the lower sequence id. The keys are computed on insertion and kept with the entries; rekey()
// recomputes them all when the policy's state moved (the views of queued sequences do not
// change, see policies/sequence_view.h).
#pragma once

#include <cstddef>
#include <vector>

#include "actors/scheduler/policies/scheduling_policy.h"

namespace zinfer::scheduler {

struct Sequence;

class SequenceQueue {
 public:
  explicit SequenceQueue(const SchedulingPolicy& policy) : policy_(&policy) {}

  bool empty() const { return head_ == entries_.size(); }
  size_t size() const { return entries_.size() - head_; }
  // The first in line; the queue must not be empty.
  Sequence& front() const { return *entries_[head_].seq; }
  // The i-th in line (0 = front); i < size().
  Sequence& at(size_t i) const { return *entries_[head_ + i].seq; }
  void pop_front();
  void insert(Sequence& s);
  // Removes `s` if it is queued here.
  void erase(const Sequence& s);
  void rekey();

 private:
  struct Entry {
    SortKey key;
    uint64_t seq_id;
    Sequence* seq;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key < b.key : a.seq_id < b.seq_id;
  }
  void compact();

  const SchedulingPolicy* policy_;
  // Sorted; entries_[0, head_) are taken already (or free room for an insertion at the front),
  // so that taking the first in line and queueing at either end (FCFS: arrivals at the back,
  // preempted sequences at the front) move nothing.
  std::vector<Entry> entries_;
  size_t head_ = 0;
};

}  // namespace zinfer::scheduler
