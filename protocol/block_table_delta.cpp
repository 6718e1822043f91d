#include "protocol/block_table_delta.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zinfer::protocol {

void BlockTableSender::compress(StepPlan& plan) {
  for (uint64_t id : plan.finished) sent_.erase(id);
  for (SeqWork& w : plan.seqs) {
    Sent& entry = sent_[w.seq_id];
    entry.generation = 0;
    std::vector<int32_t>& sent = entry.table;
    std::vector<int32_t>& table = w.block_table;
    // Entries before w.block_table_start are ones the caller already left out; normally 0.
    const size_t offset = static_cast<size_t>(std::max(0, w.block_table_start));
    if (offset > sent.size()) throw std::logic_error("block table delta beyond what was sent");
    size_t same = offset;
    const size_t limit = std::min(sent.size(), offset + table.size());
    while (same < limit && sent[same] == table[same - offset]) ++same;
    sent.resize(same);
    sent.insert(sent.end(), table.begin() + static_cast<std::ptrdiff_t>(same - offset), table.end());
    table.erase(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(same - offset));
    w.block_table_start = static_cast<int32_t>(same);
  }
}

void BlockTableSender::fill(SeqWork& w, std::span<const int32_t> table, uint64_t generation) {
  Sent& entry = sent_[w.seq_id];
  std::vector<int32_t>& sent = entry.table;
  // Usually the table only grew since the last plan: known from its generation, else one memcmp
  // of what was sent.
  size_t same = 0;
  if (generation != 0 && entry.generation == generation && sent.size() <= table.size()) {
    same = sent.size();
  } else if (sent.size() <= table.size() && std::equal(sent.begin(), sent.end(), table.begin())) {
    same = sent.size();
  } else {
    const size_t limit = std::min(sent.size(), table.size());
    while (same < limit && sent[same] == table[same]) ++same;
    sent.resize(same);
  }
  sent.insert(sent.end(), table.begin() + static_cast<std::ptrdiff_t>(same), table.end());
  entry.generation = generation;
  w.block_table.assign(table.begin() + static_cast<std::ptrdiff_t>(same), table.end());
  w.block_table_start = static_cast<int32_t>(same);
}

void BlockTableSender::forget(const std::vector<uint64_t>& seq_ids) {
  for (uint64_t id : seq_ids) sent_.erase(id);
}

namespace {

void check_delta(const SeqWork& w, size_t held) {
  if (w.block_table_start < 0 || static_cast<size_t>(w.block_table_start) > held) {
    throw std::invalid_argument("sequence " + std::to_string(w.seq_id) + ": block_table_start " +
                                std::to_string(w.block_table_start) + " is beyond the " + std::to_string(held) +
                                " entries the executor holds");
  }
}

}  // namespace

void BlockTableMirror::lend(StepPlan& plan) {
  held_.clear();
  for (const SeqWork& w : plan.seqs) {
    auto it = tables_.find(w.seq_id);
    const bool finished = std::find(plan.finished.begin(), plan.finished.end(), w.seq_id) != plan.finished.end();
    // A finished sequence's entry is erased below: the pointer would dangle, so it is looked up
    // (created) again then.
    held_.push_back(it == tables_.end() || finished ? nullptr : &it->second);
    check_delta(w, held_.back() ? held_.back()->size() : 0);
  }
  for (uint64_t id : plan.finished) tables_.erase(id);
  // Erasing other entries and inserting new ones (operator[]) keep the held pointers valid.
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    SeqWork& w = plan.seqs[i];
    std::vector<int32_t>& table = held_[i] ? *held_[i] : tables_[w.seq_id];
    table.resize(static_cast<size_t>(w.block_table_start));
    table.insert(table.end(), w.block_table.begin(), w.block_table.end());
    w.block_table.swap(table);
    table.clear();  // empty until take_back: a table never given back is sent whole again
    w.block_table_start = 0;
  }
}

void BlockTableMirror::take_back(uint64_t seq_id, std::vector<int32_t>&& table) {
  auto it = tables_.find(seq_id);
  if (it != tables_.end()) it->second = std::move(table);
}

void BlockTableMirror::expand(StepPlan& plan) {
  for (uint64_t id : plan.finished) tables_.erase(id);
  for (SeqWork& w : plan.seqs) {
    std::vector<int32_t>& table = tables_[w.seq_id];
    const size_t start = static_cast<size_t>(w.block_table_start);
    if (w.block_table_start < 0 || start > table.size()) {
      throw std::invalid_argument("sequence " + std::to_string(w.seq_id) + ": block_table_start " +
                                  std::to_string(w.block_table_start) + " is beyond the " +
                                  std::to_string(table.size()) + " entries the executor holds");
    }
    table.resize(start);
    table.insert(table.end(), w.block_table.begin(), w.block_table.end());
    w.block_table = table;
    w.block_table_start = 0;
  }
}

}  // namespace zinfer::protocol
