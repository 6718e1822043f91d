#include "actors/scheduler/sequence_queue.h"

#include <algorithm>

#include "actors/scheduler/sequence.h"

namespace zinfer::scheduler {

void SequenceQueue::insert(Sequence& s) {
  Entry e{policy_->key(s.view()), s.seq_id, &s};
  s.queue_key = e.key;
  entries_.insert(std::upper_bound(entries_.begin(), entries_.end(), e, later), e);
}

void SequenceQueue::erase(const Sequence& s) {
  const Entry probe{s.queue_key, s.seq_id, nullptr};
  auto it = std::lower_bound(entries_.begin(), entries_.end(), probe, later);
  if (it != entries_.end() && it->seq == &s) entries_.erase(it);
}

void SequenceQueue::rekey() {
  for (Entry& e : entries_) {
    e.key = policy_->key(e.seq->view());
    e.seq->queue_key = e.key;
  }
  std::sort(entries_.begin(), entries_.end(), later);
}

}  // namespace zinfer::scheduler
