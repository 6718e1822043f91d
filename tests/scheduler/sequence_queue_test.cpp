// SequenceQueue against a plain sort: insertions anywhere (front and back included, after
// entries were taken), removals, and re-keying when the policy's order changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "actors/scheduler/sequence.h"
#include "actors/scheduler/sequence_queue.h"

namespace zinfer::scheduler::testing {
namespace {

// Orders by a table the test changes at will (as fair share's counters change).
class TableOrder final : public SchedulingPolicy {
 public:
  std::string_view name() const override { return "table"; }
  SortKey key(const SequenceView& s) const override { return {rank.at(s.seq_id), 0, 0, 0}; }
  std::map<uint64_t, int64_t> rank;
};

TEST(SequenceQueue, KeepsThePolicysOrderThroughInsertsRemovalsAndRekeys) {
  TableOrder order;
  SequenceQueue q(order);
  Request r;
  std::vector<std::unique_ptr<Sequence>> seqs;
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Sequence*> queued;  // the reference: sorted by (rank, seq_id) when compared
  auto expect_same_order = [&](const char* when) {
    std::sort(queued.begin(), queued.end(), [&](const Sequence* a, const Sequence* b) {
      return std::make_pair(order.rank.at(a->seq_id), a->seq_id) < std::make_pair(order.rank.at(b->seq_id), b->seq_id);
    });
    ASSERT_EQ(q.size(), queued.size()) << when;
    ASSERT_EQ(q.empty(), queued.empty()) << when;
    if (!queued.empty()) EXPECT_EQ(&q.front(), queued.front()) << when;
  };
  for (int round = 0; round < 2000; ++round) {
    const int what = pick(0, 9);
    if (what <= 4) {  // a new sequence: at the front, at the back or anywhere
      auto s = std::make_unique<Sequence>();
      s->seq_id = seqs.size() + 1;
      s->request = &r;
      const int where = pick(0, 2);
      order.rank[s->seq_id] = where == 0 ? -1000 + round : where == 1 ? 1000 + round : pick(0, 50);
      q.insert(*s);
      queued.push_back(s.get());
      seqs.push_back(std::move(s));
    } else if (what <= 6 && !queued.empty()) {  // the first in line is taken
      expect_same_order("before taking");
      q.pop_front();
      queued.erase(queued.begin());
    } else if (what == 7 && !queued.empty()) {  // one anywhere leaves (abort)
      const size_t i = static_cast<size_t>(pick(0, static_cast<int>(queued.size()) - 1));
      q.erase(*queued[i]);
      queued.erase(queued.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (what == 8) {  // the policy's state moved: every rank changes
      for (auto& [id, rank] : order.rank) rank = pick(0, 50);
      q.rekey();
    }
    expect_same_order("after a change");
  }
  // Removing a sequence that is not queued here changes nothing.
  Sequence stranger;
  stranger.seq_id = 999999;
  stranger.request = &r;
  const size_t before = q.size();
  q.erase(stranger);
  EXPECT_EQ(q.size(), before);
}

}  // namespace
}  // namespace zinfer::scheduler::testing
