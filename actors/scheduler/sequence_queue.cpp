#include "actors/scheduler/sequence_queue.h"

#include <algorithm>

#include "actors/scheduler/sequence.h"

namespace zinfer::scheduler {

void SequenceQueue::pop_front() {
  ++head_;
  // The taken entries are dropped once they are most of the vector: amortised O(1).
  if (head_ >= 64 && head_ * 2 >= entries_.size()) compact();
}

void SequenceQueue::compact() {
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(head_));
  head_ = 0;
}

void SequenceQueue::insert(Sequence& s) {
  const Entry e{policy_->key(s.view()), s.seq_id, &s};
  s.queue_key = e.key;
  auto first = entries_.begin() + static_cast<std::ptrdiff_t>(head_);
  auto at = std::upper_bound(first, entries_.end(), e, before);
  if (at == first && head_ > 0) {
    entries_[--head_] = e;
  } else {
    entries_.insert(at, e);
  }
}

void SequenceQueue::erase(const Sequence& s) {
  const Entry probe{s.queue_key, s.seq_id, nullptr};
  auto it = std::lower_bound(entries_.begin() + static_cast<std::ptrdiff_t>(head_), entries_.end(), probe, before);
  if (it != entries_.end() && it->seq == &s) entries_.erase(it);
}

void SequenceQueue::rekey() {
  compact();
  for (Entry& e : entries_) {
    e.key = policy_->key(e.seq->view());
    e.seq->queue_key = e.key;
  }
  std::sort(entries_.begin(), entries_.end(), before);
}

}  // namespace zinfer::scheduler
