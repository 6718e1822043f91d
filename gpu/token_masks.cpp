#include "gpu/token_masks.h"

#include <limits>
#include <utility>

namespace zinfer::gpu {

void TokenMasks::reset(size_t rows, size_t row_words, Fill fill) {
  std::lock_guard lock(mutex_);
  rows_ = rows;
  row_words_ = row_words;
  fill_ = std::move(fill);
  error_ = nullptr;
  state_ = State::kPending;
}

const uint32_t* TokenMasks::rows() {
  std::unique_lock lock(mutex_);
  if (state_ == State::kPending) {
    state_ = State::kFilling;
    lock.unlock();
    std::exception_ptr error;
    try {
      words_.resize(rows_ * row_words_);
      if (rows_ > 0) fill_(words_.data(), rows_, row_words_);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    state_ = State::kDone;
    done_cv_.notify_all();
  } else {
    done_cv_.wait(lock, [this] { return state_ == State::kDone; });
  }
  if (error_) std::rethrow_exception(error_);
  return words_.data();
}

void apply_token_mask(float* logits, int32_t vocab, const uint32_t* mask) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (int32_t id = 0; id < vocab; ++id)
    if (((mask[id >> 5] >> (id & 31)) & 1u) == 0) logits[id] = kMasked;
}

}  // namespace zinfer::gpu
