// Block-table deltas over the scheduler -> executor socket (SeqWork.block_table_start, protocol
// 1.2). A sequence's block table changes rarely (one new block every block_size tokens; all of it
// after a preemption or swap-in; one entry on copy-on-write) but a plan used to carry all of it on
// every step: at 256 sequences of 2,000 tokens that was ~100 KB per step, most of the plan's
// encode, decode and ipc copy. The two ends below keep the tables in step:
//
//   scheduler side  BlockTableSender::fill(work, table) while planning (SchedulerCore with
//                   block_table_deltas), or compress(plan) on a plan of whole tables: each
//                   SeqWork carries only the entries after the longest prefix the executor has.
//   executor side   BlockTableMirror::lend(plan) after decoding: each SeqWork gets its whole
//                   table, moved out of the mirror (no copy) until take_back() returns it after
//                   the step; expand(plan) copies instead.
//
// Both forget a sequence when it appears in plan.finished. Plans reach the executor in the order
// they were compressed (one socket), so the two copies agree as long as every compressed plan is
// expanded. When that is in doubt (the executor refused a frame), the sender's reset() makes the
// next plans carry whole tables again, which any mirror accepts (start 0 replaces the table).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "protocol/messages.h"

namespace zinfer::protocol {

class BlockTableSender {
 public:
  // Rewrites each SeqWork's whole block_table (block_table_start 0, as SchedulerCore plans it)
  // into the delta against what earlier plans sent.
  void compress(StepPlan& plan);
  // Sets w.block_table / w.block_table_start to the part of `table` (the sequence's whole table)
  // after the prefix already sent; only that part is copied.
  void fill(SeqWork& w, std::span<const int32_t> table) { fill(w, table, 0); }
  // The same, told the table's `generation`: a number its owner changes whenever the table
  // changes other than by entries appended at its end (kv::BlockManager::table_generation; 0 =
  // unknown). While it is that of the last fill, what was sent is a prefix of the table and is
  // not compared again: at thousands of tokens that comparison was most of fill()'s time.
  void fill(SeqWork& w, std::span<const int32_t> table, uint64_t generation);
  // The executor drops these sequences (they are in a plan's `finished`).
  void forget(const std::vector<uint64_t>& seq_ids);
  void reset() { sent_.clear(); }
  size_t tracked() const { return sent_.size(); }

 private:
  struct Sent {
    std::vector<int32_t> table;  // what the executor has
    uint64_t generation = 0;     // the table's generation when last filled (0: unknown)
  };
  std::unordered_map<uint64_t, Sent> sent_;  // by seq_id
};

class BlockTableMirror {
 public:
  // Rewrites each SeqWork's delta into the whole table (block_table_start 0). Throws
  // std::invalid_argument naming the sequence when a delta starts beyond the table it extends.
  void expand(StepPlan& plan);
  // As expand(), but each whole table is moved into its SeqWork; give it back with take_back()
  // once the step is done (a table not given back counts as empty: the next delta for it must
  // start at 0). Checks every delta before it changes anything.
  void lend(StepPlan& plan);
  void take_back(uint64_t seq_id, std::vector<int32_t>&& table);
  size_t tracked() const { return tables_.size(); }

 private:
  std::unordered_map<uint64_t, std::vector<int32_t>> tables_;  // seq_id -> its whole table
  // lend(): each SeqWork's entry of tables_ as found while checking (null: not held yet), so that
  // a step looks each sequence up once; kept between plans to keep its memory.
  std::vector<std::vector<int32_t>*> held_;
};

}  // namespace zinfer::protocol
