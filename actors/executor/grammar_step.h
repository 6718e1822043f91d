// Structured output in the executor's step (docs/structured-output.md "How masks travel",
// architecture.md I37): before the step, the plan's new structured rules get a matcher and the
// sampling rows of constrained sequences are marked; the backend asks for the masks once it has
// launched the forward pass (gpu::TokenMasks), and they are filled then, on a few threads, while
// the device computes; after the step the sampled tokens advance the matchers. A step with no
// constrained row does no work here beyond a look-up per new rules object and finished id.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/executor/mask_workers.h"
#include "actors/executor/structured_sequences.h"
#include "gpu/backend.h"
#include "protocol/messages.h"

namespace zinfer::actors {

class GrammarStep {
 public:
  // `mask_threads`: threads besides the executor's that fill masks when a step has several.
  GrammarStep(std::shared_ptr<const grammar::Vocabulary> vocabulary, int mask_threads);

  // Before to_batch_input: compiles the structured output of the plan's new rules; a sequence
  // whose source fails gets an error (its request fails, the step goes on) and no mask.
  void take_rules(const protocol::StepPlan& plan, std::vector<protocol::SeqError>& errors);
  // After to_batch_input: drops the finished sequences' matchers, sets sampling.token_mask on
  // the rows to mask and returns the masks to hand the backend (null when no row is masked).
  gpu::TokenMasks* prepare(gpu::BatchInput& batch);
  // After the step: each sampled token advances its sequence's matcher; a token that leaves the
  // grammar fails its request.
  void advance(const std::vector<gpu::SampledToken>& sampled, std::vector<protocol::SeqError>& errors);

  StructuredSequences& sequences() { return sequences_; }
  size_t last_masked_rows() const { return rows_.size(); }
  int64_t last_fill_us() const { return last_fill_us_; }  // CPU time of the last step's masks (wall)

 private:
  void fill(uint32_t* words, size_t rows, size_t row_words);

  StructuredSequences sequences_;
  MaskWorkers workers_;
  gpu::TokenMasks masks_;
  std::vector<grammar::Matcher*> rows_;  // the masked rows of the step being prepared, in order
  int64_t last_fill_us_ = 0;
};

}  // namespace zinfer::actors
