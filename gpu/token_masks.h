// The grammar masks of one step's constrained rows (docs/structured-output.md, architecture.md
// I37): a bit per token id (bit id % 32 of word id / 32), set when the token may be sampled.
// gpu/ sees plain words; who computes them (actors/executor, from its grammar matchers) hands a
// fill function. A backend calls rows() after it has launched the step's forward pass and
// before its sampling, so that the masks are computed on the CPU while the device runs the
// forward pass; the first call computes, later calls (the other ranks of a tensor-parallel
// group) wait for it and read the same words.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

namespace zinfer::gpu {

class TokenMasks {
 public:
  // Writes `rows` masks of `row_words` words each, row after row into `words`: row k is the k-th
  // sampling row (in BatchInput::seqs order) whose SamplingConfig::token_mask is set.
  using Fill = std::function<void(uint32_t* words, size_t rows, size_t row_words)>;

  // A new step: `rows` masked rows of `row_words` words, filled by `fill` on first use. The
  // buffer keeps its memory from step to step.
  void reset(size_t rows, size_t row_words, Fill fill);
  size_t num_rows() const { return rows_; }
  size_t row_words() const { return row_words_; }
  // The masks, computed on the first call; rethrows what the fill threw. Thread-safe.
  const uint32_t* rows();

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  enum class State { kPending, kFilling, kDone } state_ = State::kPending;
  std::exception_ptr error_;
  size_t rows_ = 0;
  size_t row_words_ = 0;
  Fill fill_;
  std::vector<uint32_t> words_;
};

// Sets logits[id] to -inf where the mask's bit for id is clear (ids [0, vocab)).
void apply_token_mask(float* logits, int32_t vocab, const uint32_t* mask);

}  // namespace zinfer::gpu
