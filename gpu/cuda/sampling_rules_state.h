// The CUDA backend's side of the sampling rules (gpu/sampling_rules.h): per step, the rule
// arrays of the sampling rows (written into the step's packed inputs at the layout's offsets)
// and their lists (allowed ids, logit_bias pairs, the step's banned tokens) uploaded in one copy;
// across steps, each sequence's generated tokens on the host (bad words read the last ones) and,
// for sequences with penalties, its token counts on the device, which the sampling kernel
// updates with every token it draws: no per-step upload of counts. A sequence gets a count row
// when it first samples with penalties; the rows are as many as a step has sequences, and a
// sequence absent from a step may lose its row to another, which rebuilds its counts from the
// host record when it samples again.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gpu/backend.h"
#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/step_inputs.h"

namespace zinfer::gpu::cuda {

struct PackedRules {
  bool any_processed = false;  // some row draws from processed logits (launch_sampling_rules)
  int32_t masked_rows = 0;     // rows with a grammar mask (SamplingConfig::token_mask)
  bool any_min_p = false;
  bool any_counts = false;     // some row has a count row (the sampling kernel updates it)
};

class SamplingRulesState {
 public:
  // count_rows: sequences with penalties in one step at most; logit_rows: sampling rows.
  SamplingRulesState(int32_t count_rows, int32_t logit_rows, int32_t vocab);

  // Drops a finished sequence's record and count row.
  void finish(uint64_t seq_id);
  // Writes the rule arrays of the step's sampling rows (those pack_step wrote, in st.rows'
  // order) into words, and enqueues on `stream` the lists' upload and the (re)building of count
  // rows. Throws std::invalid_argument naming the sequence when its rules are invalid.
  PackedRules pack(const std::vector<SequenceInput>& seqs, const PackedStep& st, uint32_t* words,
                   cudaStream_t stream);
  // After the step: the tokens drawn, one per row of the last pack, join the records.
  void record(const int32_t* tokens, size_t rows);
  // Enqueues on `stream` the upload of the step's grammar masks (rows of row_words words) through
  // a pinned buffer, into a device buffer of logit_rows masks allocated on first use (its
  // address then stays); returns the device copy.
  const uint32_t* upload_masks(const uint32_t* rows, size_t num_rows, size_t row_words, cudaStream_t stream);

  const int32_t* lists() const { return lists_.as<int32_t>(); }
  float* processed() const { return processed_.as<float>(); }  // [logit_rows, vocab] once a row needed it
  uint32_t* counts() const { return counts_.as<uint32_t>(); }
  int32_t count_row_of(uint64_t seq_id) const;  // -1 when none (tests)

 private:
  int32_t acquire_count_row(uint64_t seq_id, const std::vector<uint64_t>& in_step, bool& fresh);
  void ensure_capacity(size_t list_words);

  int32_t capacity_;
  int32_t logit_rows_;
  int32_t vocab_;
  uint64_t step_ = 0;
  SampledHistory history_;
  std::vector<SampledHistory::Entry*> row_entries_;  // the last pack's rows (null: no rules)
  struct CountRow {
    int32_t row;
    uint64_t last_step;
  };
  std::unordered_map<uint64_t, CountRow> count_rows_;
  std::vector<int32_t> free_rows_;
  DeviceBuffer counts_;        // [capacity, vocab] uint32, allocated when first needed
  std::vector<int32_t> host_lists_;
  PinnedBuffer staging_;       // host_lists_ and the count entries, uploaded in one copy
  DeviceBuffer lists_;
  DeviceBuffer processed_;     // the processed logits, allocated when first needed
  PinnedBuffer mask_staging_;  // grammar masks, [logit_rows, words], allocated when first needed
  DeviceBuffer masks_;
};

}  // namespace zinfer::gpu::cuda
