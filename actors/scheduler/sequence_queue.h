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

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // The first in line; the queue must not be empty.
  Sequence& front() const { return *entries_.back().seq; }
  void pop_front() { entries_.pop_back(); }
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
  // Stored last-in-line first, so that taking the first in line is a pop_back.
  static bool later(const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key > b.key : a.seq_id > b.seq_id;
  }

  const SchedulingPolicy* policy_;
  std::vector<Entry> entries_;
};

}  // namespace zinfer::scheduler
