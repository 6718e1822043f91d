#include "gpu/cuda/step_inputs.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/cuda/sampling.h"

namespace zinfer::gpu::cuda {

StepCapacity StepCapacity::for_graph_bucket(int32_t bucket) const {
  StepCapacity c = *this;
  c.max_tokens = std::min(bucket, max_tokens);
  c.max_seqs = std::min(bucket, max_seqs);
  return c;
}

StepLayout::StepLayout(const StepCapacity& c) : cap(c) {
  max_tiles = c.max_tokens / c.tile_queries + c.max_seqs;
  size_t at = 0;
  auto take = [&](size_t words) {
    const size_t start = at;
    at += (words + 1) / 2 * 2;  // keep every array 8-byte aligned
    return start;
  };
  const size_t T = c.max_tokens, S = c.max_seqs;
  token_ids = take(T);
  from_slot = take(T);
  positions = take(T);
  slot_mapping = take(T);
  token_seq = take(T);
  seq_block_offset = take(S + 1);
  decode_tokens = take(T);
  tiles = take(static_cast<size_t>(max_tiles) * 3);
  sample_rows = take(S);
  temperature = take(S);
  top_p = take(S);
  top_k = take(S);
  sample_index = take(S);
  num_top = take(S);
  dest_slot = take(S);
  seed = take(2 * S);
  repetition = take(S);
  frequency = take(S);
  presence = take(S);
  min_p = take(S);
  count_row = take(S);
  processed_row = take(S);
  mask_row = take(S);
  rule_lists = take(S * kRuleLists * 2);
  block_tables = take((S + 1) * static_cast<size_t>(c.max_blocks_per_seq));
  total_words = at;
}

LastTokenSlots::LastTokenSlots(int32_t capacity) : capacity_(capacity) {
  free_.reserve(capacity);
  for (int32_t i = capacity - 1; i >= 0; --i) free_.push_back(i);
}

int32_t LastTokenSlots::find(uint64_t seq_id) const {
  auto it = slots_.find(seq_id);
  return it == slots_.end() ? -1 : it->second;
}

int32_t LastTokenSlots::acquire(uint64_t seq_id) {
  auto it = slots_.find(seq_id);
  if (it != slots_.end()) return it->second;
  if (free_.empty()) {
    throw std::runtime_error("CUDA backend: more than " + std::to_string(capacity_) +
                             " sequences hold a device-side sampled token; finished sequences must be reported");
  }
  const int32_t slot = free_.back();
  free_.pop_back();
  slots_.emplace(seq_id, slot);
  return slot;
}

void LastTokenSlots::release(uint64_t seq_id) {
  auto it = slots_.find(seq_id);
  if (it == slots_.end()) return;
  free_.push_back(it->second);
  slots_.erase(it);
}

namespace {

std::string seq_name(const SequenceInput& s) { return "sequence " + std::to_string(s.seq_id); }

void put_float(uint32_t* words, size_t at, float v) { std::memcpy(words + at, &v, 4); }

}  // namespace

PackedStep pack_step(const std::vector<SequenceInput>& seqs, const StepLayout& L, bool use_tiles,
                     int32_t pad_to, LastTokenSlots& slots, uint64_t unseeded_seed, uint32_t* words) {
  const StepCapacity& cap = L.cap;
  PackedStep out;
  if (static_cast<int32_t>(seqs.size()) > cap.max_seqs) {
    throw std::invalid_argument("step has " + std::to_string(seqs.size()) + " sequences; the CUDA backend was sized for " +
                                std::to_string(cap.max_seqs) + " (max_num_seqs)");
  }
  int64_t total = 0;
  for (const SequenceInput& s : seqs) total += s.use_last_sampled ? 1 : s.num_tokens;
  if (total > cap.max_tokens) {
    throw std::invalid_argument("step has " + std::to_string(total) + " tokens; the CUDA backend was sized for " +
                                std::to_string(cap.max_tokens) + " (max_num_batched_tokens)");
  }
  out.decode_only = !seqs.empty();
  out.layout = &L;
  int32_t t = 0;
  size_t bt_used = 0;
  for (size_t si = 0; si < seqs.size(); ++si) {
    const SequenceInput& s = seqs[si];
    const int32_t n = s.use_last_sampled ? 1 : s.num_tokens;
    if (n <= 0) throw std::invalid_argument(seq_name(s) + " has no tokens in the step");
    if (!s.use_last_sampled && static_cast<int32_t>(s.token_ids.size()) != n) {
      throw std::invalid_argument(seq_name(s) + ": num_tokens is " + std::to_string(n) + " but " +
                                  std::to_string(s.token_ids.size()) + " token ids were given");
    }
    if (s.start_pos < 0) throw std::invalid_argument(seq_name(s) + " has a negative start_pos");
    const int64_t context = static_cast<int64_t>(s.start_pos) + n;
    const int64_t blocks_needed = (context + cap.block_size - 1) / cap.block_size;
    if (blocks_needed > cap.max_blocks_per_seq) {
      throw std::invalid_argument(seq_name(s) + " reaches position " + std::to_string(context) +
                                  ", beyond the backend's max_model_len");
    }
    if (static_cast<int64_t>(s.block_table.size()) < blocks_needed) {
      throw std::invalid_argument(seq_name(s) + " needs " + std::to_string(blocks_needed) + " KV blocks but its block table has " +
                                  std::to_string(s.block_table.size()));
    }
    for (int64_t b = 0; b < blocks_needed; ++b) {
      const int32_t block = s.block_table[b];
      if (block < 0 || block >= cap.num_gpu_blocks) {
        throw std::invalid_argument(seq_name(s) + " names KV block " + std::to_string(block) + ", outside [0, " +
                                    std::to_string(cap.num_gpu_blocks) + ")");
      }
      words[L.block_tables + bt_used + b] = static_cast<uint32_t>(block);
    }
    words[L.seq_block_offset + si] = static_cast<uint32_t>(bt_used);
    bt_used += static_cast<size_t>(blocks_needed);
    int32_t from_slot = -1;
    if (s.use_last_sampled) {
      from_slot = slots.find(s.seq_id);
      if (from_slot < 0) {
        throw std::invalid_argument(seq_name(s) + " asks for its last sampled token, but it sampled none on this backend");
      }
    }
    for (int32_t i = 0; i < n; ++i, ++t) {
      if (!s.use_last_sampled && (s.token_ids[i] < 0 || s.token_ids[i] >= cap.vocab)) {
        throw std::invalid_argument(seq_name(s) + " has token id " + std::to_string(s.token_ids[i]) +
                                    ", outside the vocabulary [0, " + std::to_string(cap.vocab) + ")");
      }
      words[L.token_ids + t] = static_cast<uint32_t>(s.use_last_sampled ? 0 : s.token_ids[i]);
      words[L.from_slot + t] = static_cast<uint32_t>(from_slot);
      const int32_t pos = s.start_pos + i;
      words[L.positions + t] = static_cast<uint32_t>(pos);
      words[L.slot_mapping + t] =
          static_cast<uint32_t>(s.block_table[pos / cap.block_size] * cap.block_size + pos % cap.block_size);
      words[L.token_seq + t] = static_cast<uint32_t>(si);
      if (n == 1 || !use_tiles) words[L.decode_tokens + out.num_decode++] = static_cast<uint32_t>(t);
    }
    if (n > 1 && use_tiles) {
      out.decode_only = false;
      for (int32_t q0 = 0; q0 < n; q0 += cap.tile_queries) {
        const size_t at = L.tiles + static_cast<size_t>(out.num_tiles++) * 3;
        words[at] = static_cast<uint32_t>(t - n + q0);
        words[at + 1] = static_cast<uint32_t>(std::min(cap.tile_queries, n - q0));
        words[at + 2] = static_cast<uint32_t>(si);
      }
    } else if (n > 1) {
      out.decode_only = false;
      out.decode_tokens_alone = false;  // all n tokens are in the decode list
    }
    out.max_context = std::max<int32_t>(out.max_context, static_cast<int32_t>(context));
    if (s.sample) {
      const SamplingConfig& c = s.sampling;
      if (c.top_logprobs < 0 || c.top_logprobs > kMaxTopLogprobs) {
        throw std::invalid_argument(seq_name(s) + " asks for " + std::to_string(c.top_logprobs) +
                                    " top logprobs; the CUDA backend gives 0 to " + std::to_string(kMaxTopLogprobs));
      }
      if (!(c.temperature >= 0.f) || !(c.top_p > 0.f)) {
        throw std::invalid_argument(seq_name(s) + " has an invalid temperature or top_p");
      }
      const size_t r = out.rows.size();
      words[L.sample_rows + r] = static_cast<uint32_t>(t - 1);
      put_float(words, L.temperature + r, c.temperature);
      put_float(words, L.top_p + r, c.top_p);
      words[L.top_k + r] = static_cast<uint32_t>(c.top_k);
      words[L.sample_index + r] = static_cast<uint32_t>(c.sample_index);
      words[L.num_top + r] = static_cast<uint32_t>(c.top_logprobs);
      words[L.dest_slot + r] = static_cast<uint32_t>(slots.acquire(s.seq_id));
      // An unseeded row still draws from a counter-based stream: the step's random seed mixed with
      // the sequence id, so two unseeded rows of one step differ.
      const uint64_t seed = c.seed >= 0 ? static_cast<uint64_t>(c.seed) : unseeded_seed ^ (s.seq_id * 0x9E3779B97F4A7C15ull);
      std::memcpy(words + L.seed + 2 * r, &seed, 8);
      // No rules until the backend's SamplingRulesState writes them.
      put_float(words, L.repetition + r, 1.0f);
      put_float(words, L.frequency + r, 0.0f);
      put_float(words, L.presence + r, 0.0f);
      put_float(words, L.min_p + r, 0.0f);
      words[L.count_row + r] = static_cast<uint32_t>(-1);
      words[L.processed_row + r] = 0;
      words[L.mask_row + r] = static_cast<uint32_t>(-1);
      std::fill_n(words + L.rule_lists + r * kRuleLists * 2, kRuleLists * 2, 0u);
      out.rows.push_back(SampleRow{s.seq_id, c.top_logprobs});
    }
  }
  out.num_tokens = t;
  out.num_seqs = static_cast<int32_t>(seqs.size());
  out.padded_tokens = std::max(t, std::min(pad_to, cap.max_tokens));
  // Padding tokens (graph buckets) attend one key in the scratch block and write their K/V there.
  const size_t pad_seq = static_cast<size_t>(cap.max_seqs);
  words[L.seq_block_offset + pad_seq] = static_cast<uint32_t>(bt_used);
  words[L.block_tables + bt_used] = static_cast<uint32_t>(cap.scratch_block);
  out.words_used = L.block_tables + bt_used + 1;
  for (int32_t p = t; p < out.padded_tokens; ++p) {
    words[L.token_ids + p] = 0;
    words[L.from_slot + p] = static_cast<uint32_t>(-1);
    words[L.positions + p] = 0;
    words[L.slot_mapping + p] = static_cast<uint32_t>(cap.scratch_block * cap.block_size);
    words[L.token_seq + p] = static_cast<uint32_t>(pad_seq);
    words[L.decode_tokens + out.num_decode++] = static_cast<uint32_t>(p);
  }
  return out;
}

}  // namespace zinfer::gpu::cuda
