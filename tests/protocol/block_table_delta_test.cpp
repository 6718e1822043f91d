// Block-table deltas: whatever the tables do between steps (grow, change in the middle by
// copy-on-write, get replaced by a preemption or swap-in, shrink, finish), the executor's
// expanded plan carries exactly the tables the scheduler planned, through the real codec.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>

#include "protocol/block_table_delta.h"
#include "protocol/envelope.h"

namespace zinfer::protocol {
namespace {

// Invariant 9 (docs/architecture.md): decode-step messages carry deltas, never whole sequences.
TEST(BlockTableDelta, DecodeStepsThatAddNoBlockSendNoEntries) {
  BlockTableSender sender;
  BlockTableMirror mirror;
  auto step = [&](std::vector<int32_t> table) {
    StepPlan p;
    SeqWork w;
    w.seq_id = 7;
    w.block_table = table;
    p.seqs.push_back(w);
    sender.compress(p);
    StepPlan sent = p;
    mirror.expand(p);
    EXPECT_EQ(p.seqs[0].block_table, table);
    EXPECT_EQ(p.seqs[0].block_table_start, 0);
    return sent.seqs[0];
  };
  SeqWork a = step({4, 9});
  EXPECT_EQ(a.block_table_start, 0);
  EXPECT_EQ(a.block_table, (std::vector<int32_t>{4, 9}));
  SeqWork b = step({4, 9});
  EXPECT_EQ(b.block_table_start, 2);
  EXPECT_TRUE(b.block_table.empty());
  SeqWork c = step({4, 9, 11});
  EXPECT_EQ(c.block_table_start, 2);
  EXPECT_EQ(c.block_table, (std::vector<int32_t>{11}));
  SeqWork d = step({4, 5, 11});  // copy-on-write of the middle block
  EXPECT_EQ(d.block_table_start, 1);
  EXPECT_EQ(d.block_table, (std::vector<int32_t>{5, 11}));
  SeqWork e = step({30});  // preempted and readmitted on other blocks
  EXPECT_EQ(e.block_table_start, 0);
  EXPECT_EQ(e.block_table, (std::vector<int32_t>{30}));
}

// planner_path: the scheduler core's way (fill per work while planning, forget the finished, the
// executor lends tables for the step and takes them back); else compress + expand.
void random_histories(bool planner_path) {
  std::mt19937 rng(17);
  BlockTableSender sender;
  BlockTableMirror mirror;
  std::map<uint64_t, std::vector<int32_t>> tables;
  uint64_t next_id = 1;
  size_t sent_entries = 0, whole_entries = 0;
  for (int step = 0; step < 600; ++step) {
    StepPlan plan;
    plan.step_id = static_cast<uint64_t>(step);
    if (tables.size() < 54 && rng() % 3 == 0) tables[next_id++] = {};
    for (auto it = tables.begin(); it != tables.end();) {
      auto& t = it->second;
      switch (rng() % 20) {
        case 0: plan.finished.push_back(it->first); it = tables.erase(it); continue;
        case 1: t.assign(1 + rng() % 9, static_cast<int32_t>(rng() % 97)); break;  // preemption
        case 2: if (!t.empty()) t[rng() % t.size()] = static_cast<int32_t>(rng() % 97); break;  // CoW
        case 3: if (!t.empty()) t.pop_back(); break;
        default: if (rng() % 4 == 0) t.push_back(static_cast<int32_t>(rng() % 1000)); break;
      }
      if (rng() % 5 != 0) {  // in this step (a sequence may sit out steps: waiting, swapped)
        SeqWork w;
        w.seq_id = it->first;
        w.block_table = t;
        plan.seqs.push_back(w);
        whole_entries += t.size();
      }
      ++it;
    }
    const StepPlan planned = plan;
    if (planner_path) {
      sender.forget(plan.finished);
      for (auto& w : plan.seqs) {
        const std::vector<int32_t> whole = w.block_table;
        sender.fill(w, whole);
      }
    } else {
      sender.compress(plan);
    }
    for (const auto& w : plan.seqs) sent_entries += w.block_table.size();
    StepPlan received = decode<StepPlan>(encode(plan));
    if (planner_path) {
      mirror.lend(received);
    } else {
      mirror.expand(received);
    }
    ASSERT_EQ(received.seqs.size(), planned.seqs.size());
    for (size_t i = 0; i < planned.seqs.size(); ++i) {
      ASSERT_EQ(received.seqs[i].block_table, planned.seqs[i].block_table) << "step " << step << " seq " << i;
    }
    if (planner_path) {
      for (auto& w : received.seqs) mirror.take_back(w.seq_id, std::move(w.block_table));
    }
    EXPECT_EQ(mirror.tracked(), sender.tracked());
  }
  EXPECT_LT(sent_entries * 5, whole_entries);  // the point of it
}

// Invariant 4 (docs/architecture.md): the executor's block tables are copies that always equal the KV manager's.
TEST(BlockTableDelta, RandomHistoriesThroughTheCodecRebuildEveryTable) { random_histories(false); }

// Invariant 4 (docs/architecture.md): the executor's block tables are copies that always equal the KV manager's.
TEST(BlockTableDelta, RandomHistoriesPlannedPerWorkAndLentForTheStep) { random_histories(true); }

TEST(BlockTableDelta, ALentTableNotGivenBackIsRefusedUntilSentWhole) {
  BlockTableSender sender;
  BlockTableMirror mirror;
  StepPlan p;
  SeqWork w;
  w.seq_id = 5;
  sender.fill(w, std::vector<int32_t>{1, 2});
  p.seqs.push_back(w);
  mirror.lend(p);
  EXPECT_EQ(p.seqs[0].block_table, (std::vector<int32_t>{1, 2}));  // never given back
  StepPlan next;
  SeqWork v;
  v.seq_id = 5;
  sender.fill(v, std::vector<int32_t>{1, 2, 3});
  EXPECT_EQ(v.block_table_start, 2);
  next.seqs.push_back(v);
  EXPECT_THROW(mirror.lend(next), std::invalid_argument);
  EXPECT_EQ(next.seqs[0].block_table, (std::vector<int32_t>{3})) << "a refused plan is left as it was";
  sender.reset();
  SeqWork again;
  again.seq_id = 5;
  sender.fill(again, std::vector<int32_t>{1, 2, 3});
  StepPlan whole;
  whole.seqs.push_back(again);
  mirror.lend(whole);
  EXPECT_EQ(whole.seqs[0].block_table, (std::vector<int32_t>{1, 2, 3}));
}

TEST(BlockTableDelta, AMirrorRefusesADeltaBeyondItsTableAndAResetRecovers) {
  BlockTableSender sender;
  BlockTableMirror mirror, fresh_mirror;
  StepPlan p;
  SeqWork w;
  w.seq_id = 3;
  w.block_table = {1, 2, 3};
  p.seqs.push_back(w);
  StepPlan first = p;
  sender.compress(first);
  mirror.expand(first);
  StepPlan second = p;
  second.seqs[0].block_table.push_back(4);
  sender.compress(second);  // start 3: only a mirror that saw the first plan can take it
  StepPlan lost = second;
  EXPECT_THROW(fresh_mirror.expand(lost), std::invalid_argument);
  sender.reset();
  StepPlan third = p;
  sender.compress(third);
  EXPECT_EQ(third.seqs[0].block_table_start, 0);
  fresh_mirror.expand(third);
  EXPECT_EQ(third.seqs[0].block_table, (std::vector<int32_t>{1, 2, 3}));
}

TEST(BlockTableDelta, APeerThatSendsWholeTablesNeedsNoSender) {
  // An external scheduler (examples/python/scheduler.py) never sets block_table_start.
  BlockTableMirror mirror;
  for (int i = 0; i < 3; ++i) {
    StepPlan p;
    SeqWork w;
    w.seq_id = 5;
    w.block_table = std::vector<int32_t>(static_cast<size_t>(i + 1), 8);
    p.seqs.push_back(w);
    mirror.expand(p);
    EXPECT_EQ(p.seqs[0].block_table.size(), static_cast<size_t>(i + 1));
  }
}

}  // namespace
}  // namespace zinfer::protocol

namespace zinfer::protocol {
namespace {

// With a generation, an unchanged one means "only appended": the delta is the new tail. A new
// generation makes the sender compare again, so a changed entry goes out.
TEST(BlockTableDelta, GenerationsSkipTheComparisonOnlyWhileTheyHold) {
  BlockTableSender sender;
  auto fill = [&](std::vector<int32_t> table, uint64_t generation) {
    SeqWork w;
    w.seq_id = 3;
    sender.fill(w, table, generation);
    return std::make_pair(w.block_table_start, w.block_table);
  };
  EXPECT_EQ(fill({4, 5}, 7), std::make_pair(0, std::vector<int32_t>{4, 5}));
  EXPECT_EQ(fill({4, 5, 6}, 7), std::make_pair(2, std::vector<int32_t>{6}));
  EXPECT_EQ(fill({4, 5, 9}, 8), std::make_pair(2, std::vector<int32_t>{9}));    // last entry replaced
  EXPECT_EQ(fill({1, 2, 3, 4}, 9), std::make_pair(0, std::vector<int32_t>{1, 2, 3, 4}));  // a new table
  EXPECT_EQ(fill({1, 2, 3, 4}, 0), std::make_pair(4, std::vector<int32_t>{}));  // unknown: compared
  EXPECT_EQ(fill({1, 7, 3, 4}, 0), std::make_pair(1, std::vector<int32_t>{7, 3, 4}));
}

}  // namespace
}  // namespace zinfer::protocol
