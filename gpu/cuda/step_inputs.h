// The host side of a step: the per-token, per-sequence and per-sample arrays the kernels read,
// packed into one buffer of 32-bit words at fixed offsets (fixed so that a captured CUDA graph can
// read a new step's arrays from the same addresses), with every index checked first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "gpu/backend.h"

namespace zinfer::gpu::cuda {

struct StepCapacity {
  int32_t max_tokens = 0;          // tokens in one step
  int32_t max_seqs = 0;            // sequences in one step
  int32_t max_blocks_per_seq = 0;  // block-table length
  int32_t block_size = 16;
  int32_t num_gpu_blocks = 0;      // valid block ids are [0, num_gpu_blocks)
  int32_t scratch_block = 0;       // where padding tokens of a graph bucket write their K/V
  int32_t vocab = 0;
  int32_t tile_queries = 64;       // queries per prefill attention tile
  // The capacity of a CUDA graph bucket's decode steps: at most `bucket` sequences of one token.
  // A layout sized so packs those steps' arrays into a few hundred bytes (the block tables
  // aside) where the full layout spreads them over its max_tokens-long arrays, and a step
  // uploads the prefix of the buffer it uses: at batch 1 on Llama-3-8B's defaults, about 220
  // bytes at context 128 and 450 at 1,024 (the block table) instead of about 200 KB.
  StepCapacity for_graph_bucket(int32_t bucket) const;
};

struct StepLayout {
  explicit StepLayout(const StepCapacity& cap);
  StepCapacity cap;
  int32_t max_tiles = 0;
  // Offsets in 32-bit words.
  size_t token_ids = 0, from_slot = 0, positions = 0, slot_mapping = 0, token_seq = 0;  // [max_tokens]
  size_t seq_block_offset = 0;  // [max_seqs + 1]; the extra sequence is the graph padding's
  size_t decode_tokens = 0;     // [max_tokens]
  size_t tiles = 0;             // [max_tiles * 3]
  size_t sample_rows = 0, temperature = 0, top_p = 0, top_k = 0, sample_index = 0, num_top = 0,
         dest_slot = 0;         // [max_seqs] each
  size_t seed = 0;              // [max_seqs] uint64, 8-byte aligned
  // Sampling rules (sampling_rules_state.h): pack_step writes the defaults (no rules), the
  // backend's SamplingRulesState the rows that have rules.
  size_t repetition = 0, frequency = 0, presence = 0, min_p = 0, count_row = 0,
         processed_row = 0;     // [max_seqs] each
  size_t mask_row = 0;          // [max_seqs]: the row's grammar mask, -1: none
  size_t rule_lists = 0;        // [max_seqs * kRuleLists * 2] (offset, length) pairs
  // Last, so that a step uploads only the prefix it uses: the sequences' block tables packed one
  // after another ([(max_seqs + 1) * max_blocks_per_seq] at most).
  size_t block_tables = 0;
  size_t total_words = 0;
};

// Device-resident "last sampled token" slots for sequences whose next input stays on the device.
class LastTokenSlots {
 public:
  explicit LastTokenSlots(int32_t capacity);
  int32_t capacity() const { return capacity_; }
  int32_t find(uint64_t seq_id) const;      // -1 when none
  int32_t acquire(uint64_t seq_id);         // existing or new; throws when all are in use
  void release(uint64_t seq_id);

 private:
  int32_t capacity_;
  std::map<uint64_t, int32_t> slots_;
  std::vector<int32_t> free_;
};

struct SampleRow {
  uint64_t seq_id = 0;
  int32_t num_top = 0;
};

struct PackedStep {
  int32_t num_tokens = 0;       // real tokens
  int32_t padded_tokens = 0;    // tokens the forward pass runs (graph bucket), >= num_tokens
  int32_t num_seqs = 0;
  int32_t num_decode = 0;       // entries of decode_tokens
  int32_t num_tiles = 0;
  int32_t max_context = 0;
  bool decode_only = false;
  // Every token of the decode list is its sequence's only token in the step, so the only key it
  // attends that the step writes is its own (DecodeWork::keys_before_query_cached).
  bool decode_tokens_alone = true;
  size_t words_used = 0;        // prefix of the packed buffer to upload
  const StepLayout* layout = nullptr;  // the layout the arrays were packed in
  std::vector<SampleRow> rows;  // one per sampling sequence, in batch order
};

// Validates the sequences (token counts, positions, block tables, sampling settings; errors name
// the sequence) and writes the arrays into words (layout.total_words). Sequences with one query
// token, and every token when use_tiles is false, go to the decode attention list; the others
// are cut into prefill tiles. pad_to > num_tokens adds padding decode tokens (graph buckets).
// unseeded_seed gives each unseeded sampling row its seed.
PackedStep pack_step(const std::vector<SequenceInput>& seqs, const StepLayout& layout, bool use_tiles,
                     int32_t pad_to, LastTokenSlots& slots, uint64_t unseeded_seed, uint32_t* words);

}  // namespace zinfer::gpu::cuda
