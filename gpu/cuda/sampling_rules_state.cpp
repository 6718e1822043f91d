#include "gpu/cuda/sampling_rules_state.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/sampling.h"

namespace zinfer::gpu::cuda {
namespace {

void put_float(uint32_t* words, size_t at, float v) { std::memcpy(words + at, &v, 4); }

}  // namespace

SamplingRulesState::SamplingRulesState(int32_t count_rows, int32_t logit_rows, int32_t vocab)
    : capacity_(count_rows), logit_rows_(logit_rows), vocab_(vocab) {
  for (int32_t i = count_rows - 1; i >= 0; --i) free_rows_.push_back(i);
}

void SamplingRulesState::finish(uint64_t seq_id) {
  history_.drop(seq_id);
  auto it = count_rows_.find(seq_id);
  if (it == count_rows_.end()) return;
  free_rows_.push_back(it->second.row);
  count_rows_.erase(it);
}

int32_t SamplingRulesState::count_row_of(uint64_t seq_id) const {
  auto it = count_rows_.find(seq_id);
  return it == count_rows_.end() ? -1 : it->second.row;
}

int32_t SamplingRulesState::acquire_count_row(uint64_t seq_id, const std::vector<uint64_t>& in_step, bool& fresh) {
  fresh = false;
  auto it = count_rows_.find(seq_id);
  if (it != count_rows_.end()) {
    it->second.last_step = step_;
    return it->second.row;
  }
  fresh = true;
  if (free_rows_.empty()) {
    // The least recently used row of a sequence that is not in this step.
    auto victim = count_rows_.end();
    for (auto c = count_rows_.begin(); c != count_rows_.end(); ++c) {
      if (c->second.last_step == step_ || std::find(in_step.begin(), in_step.end(), c->first) != in_step.end()) continue;
      if (victim == count_rows_.end() || c->second.last_step < victim->second.last_step) victim = c;
    }
    if (victim == count_rows_.end()) {
      throw std::invalid_argument("more sequences with penalties in one step than the " + std::to_string(capacity_) +
                                  " count rows (max_num_seqs)");
    }
    free_rows_.push_back(victim->second.row);
    count_rows_.erase(victim);
  }
  const int32_t row = free_rows_.back();
  free_rows_.pop_back();
  count_rows_.emplace(seq_id, CountRow{row, step_});
  return row;
}

void SamplingRulesState::ensure_capacity(size_t words) {
  if (staging_.bytes() < words * 4) {
    const size_t bytes = std::max<size_t>(words * 4 * 2, 1 << 16);
    staging_ = PinnedBuffer(bytes, "sampling rule lists");
    lists_ = DeviceBuffer(bytes, "sampling rule lists");
  }
}

PackedRules SamplingRulesState::pack(const std::vector<SequenceInput>& seqs, const PackedStep& st, uint32_t* words,
                                     cudaStream_t stream) {
  ++step_;
  const StepLayout& L = *st.layout;
  PackedRules out;
  row_entries_.assign(st.rows.size(), nullptr);
  host_lists_.clear();
  std::vector<int32_t> entries;       // (count row, token | kPromptBit) of the rows to (re)build
  std::vector<int32_t> fresh_rows;    // count rows to zero first
  std::vector<uint64_t> in_step;
  size_t r = 0;
  for (const SequenceInput& s : seqs) {
    if (!s.sample) continue;
    in_step.push_back(s.seq_id);
  }
  for (const SequenceInput& s : seqs) {
    if (!s.sample) continue;
    const size_t row = r++;
    if (s.sampling.token_mask) {
      // The k-th masked row reads the k-th mask (gpu/token_masks.h); the rules kernel applies it.
      words[L.mask_row + row] = static_cast<uint32_t>(out.masked_rows++);
      words[L.processed_row + row] = 1;
      out.any_processed = true;
    }
    const SamplingRules* rules = s.sampling.rules.get();
    if (rules == nullptr) continue;
    SampledHistory::Entry* known = history_.find(s.seq_id);
    if (known == nullptr || known->rules != s.sampling.rules) {  // checked once per sequence
      try {
        rules->validate(vocab_);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("sequence " + std::to_string(s.seq_id) + ": " + e.what());
      }
      if (known != nullptr) finish(s.seq_id);  // new rules: the counts are rebuilt from them
    }
    SampledHistory::Entry& entry = history_.track(s.seq_id, s.sampling.rules);
    row_entries_[row] = &entry;
    put_float(words, L.min_p + row, rules->min_p);
    out.any_min_p |= rules->min_p > 0.0f;
    const std::vector<int32_t> banned = banned_tokens(*rules, entry.outputs, s.sampling.sample_index);
    const bool processed =
        rules->has_penalties() || !rules->allowed_token_ids.empty() || !rules->logit_bias.empty() || !banned.empty();
    if (!processed) continue;
    out.any_processed = true;
    words[L.processed_row + row] = 1;
    put_float(words, L.repetition + row, rules->repetition_penalty);
    put_float(words, L.frequency + row, rules->frequency_penalty);
    put_float(words, L.presence + row, rules->presence_penalty);
    uint32_t* index = words + L.rule_lists + row * kRuleLists * 2;
    index[2 * kAllowedList] = static_cast<uint32_t>(host_lists_.size());
    index[2 * kAllowedList + 1] = static_cast<uint32_t>(rules->allowed_token_ids.size());
    host_lists_.insert(host_lists_.end(), rules->allowed_token_ids.begin(), rules->allowed_token_ids.end());
    index[2 * kBiasList] = static_cast<uint32_t>(host_lists_.size());
    index[2 * kBiasList + 1] = static_cast<uint32_t>(rules->logit_bias.size());
    for (const auto& [token, bias] : rules->logit_bias) {
      int32_t bits;
      std::memcpy(&bits, &bias, 4);
      host_lists_.push_back(token);
      host_lists_.push_back(bits);
    }
    index[2 * kBannedList] = static_cast<uint32_t>(host_lists_.size());
    index[2 * kBannedList + 1] = static_cast<uint32_t>(banned.size());
    host_lists_.insert(host_lists_.end(), banned.begin(), banned.end());
    if (rules->has_penalties()) {
      bool fresh = false;
      const int32_t count_row = acquire_count_row(s.seq_id, in_step, fresh);
      words[L.count_row + row] = static_cast<uint32_t>(count_row);
      out.any_counts = true;
      if (fresh) {
        fresh_rows.push_back(count_row);
        for (int32_t id : rules->prompt_ids) entries.insert(entries.end(), {count_row, static_cast<int32_t>(id | kPromptBit)});
        for (int32_t id : entry.outputs) entries.insert(entries.end(), {count_row, id});
      }
    }
  }
  if (out.any_processed && processed_.get() == nullptr) {
    processed_ = DeviceBuffer(static_cast<size_t>(logit_rows_) * vocab_ * 4, "processed logits");
  }
  if (!fresh_rows.empty() && counts_.get() == nullptr) {
    counts_ = DeviceBuffer(static_cast<size_t>(capacity_) * vocab_ * 4, "sampling token counts");
  }
  const size_t words_needed = host_lists_.size() + entries.size();
  if (words_needed == 0) return out;
  ensure_capacity(words_needed);
  auto* staged = staging_.as<int32_t>();
  std::copy(host_lists_.begin(), host_lists_.end(), staged);
  std::copy(entries.begin(), entries.end(), staged + host_lists_.size());
  check_cuda(cudaMemcpyAsync(lists_.get(), staged, words_needed * 4, cudaMemcpyHostToDevice, stream),
             "upload of sampling rule lists");
  for (int32_t row : fresh_rows) {
    check_cuda(cudaMemsetAsync(counts_.as<uint32_t>() + static_cast<size_t>(row) * vocab_, 0,
                               static_cast<size_t>(vocab_) * 4, stream),
               "cudaMemsetAsync of a count row");
  }
  check_cuda(launch_count_tokens(counts_.as<uint32_t>(), vocab_, lists_.as<int32_t>() + host_lists_.size(),
                                 static_cast<int32_t>(entries.size() / 2), stream),
             "token counts");
  return out;
}

const uint32_t* SamplingRulesState::upload_masks(const uint32_t* rows, size_t num_rows, size_t row_words,
                                                 cudaStream_t stream) {
  if (num_rows > static_cast<size_t>(logit_rows_)) {
    throw std::invalid_argument(std::to_string(num_rows) + " grammar masks for " + std::to_string(logit_rows_) +
                                " sampling rows");
  }
  const size_t bytes = num_rows * row_words * 4;
  if (mask_staging_.bytes() < bytes) {
    const size_t all = static_cast<size_t>(logit_rows_) * row_words * 4;
    mask_staging_ = PinnedBuffer(all, "grammar masks");
    masks_ = DeviceBuffer(all, "grammar masks");
  }
  std::memcpy(mask_staging_.as<void>(), rows, bytes);
  check_cuda(cudaMemcpyAsync(masks_.get(), mask_staging_.as<void>(), bytes, cudaMemcpyHostToDevice, stream),
             "upload of grammar masks");
  return masks_.as<uint32_t>();
}

void SamplingRulesState::record(const int32_t* tokens, size_t rows) {
  for (size_t r = 0; r < rows && r < row_entries_.size(); ++r)
    if (row_entries_[r] != nullptr) row_entries_[r]->outputs.push_back(tokens[r]);
}

}  // namespace zinfer::gpu::cuda
