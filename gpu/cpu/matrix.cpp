#include "gpu/cpu/matrix.h"

#include <cstring>

#include "gpu/cpu/ops.h"

namespace zinfer::gpu::cpu {

void Matrix::append(const TensorView& t) {
  const int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
  cols_ = t.shape.empty() ? 1 : t.shape.back();
  const size_t n = static_cast<size_t>(t.numel());
  const bool keep_bf16 = t.dtype == DType::kBF16 && (rows_ == 0 || is_bf16());
  if (keep_bf16) {
    const size_t old = bf16_.size();
    bf16_.resize(old + n);
    std::memcpy(bf16_.data() + old, t.data, n * 2);
  } else {
    if (is_bf16()) {  // an earlier part was bf16: widen it so the whole matrix is float32
      f32_.resize(bf16_.size());
      for (size_t i = 0; i < bf16_.size(); ++i) f32_[i] = bf16_to_float(bf16_[i]);
      bf16_.clear();
      bf16_.shrink_to_fit();
    }
    const size_t old = f32_.size();
    f32_.resize(old + n);
    to_float32(t, f32_.data() + old);
  }
  rows_ += rows;
}

void Matrix::set_fp8(quant::Fp8Weight w) { fp8_ = std::make_unique<Fp8Matrix>(std::move(w)); }

void Matrix::apply(const float* x, const float* bias, float* y, int64_t M) const {
  if (fp8_) return fp8_->apply(x, bias, y, M);
  if (is_bf16()) linear_bf16(x, bf16_.data(), bias, y, M, rows_, cols_);
  else linear(x, f32_.data(), bias, y, M, rows_, cols_);
}

void Matrix::row(int64_t r, float* out) const {
  if (fp8_) return fp8_->row(r, out);
  if (is_bf16()) {
    for (int64_t i = 0; i < cols_; ++i) out[i] = bf16_to_float(bf16_[r * cols_ + i]);
  } else {
    std::memcpy(out, f32_.data() + r * cols_, cols_ * sizeof(float));
  }
}

}  // namespace zinfer::gpu::cpu
