#include "protocol/block_table_delta.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zinfer::protocol {

void BlockTableSender::compress(StepPlan& plan) {
  for (uint64_t id : plan.finished) sent_.erase(id);
  for (SeqWork& w : plan.seqs) {
    std::vector<int32_t>& sent = sent_[w.seq_id];
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
