// A weight matrix of the CPU backend, [rows, cols] in torch's Linear layout. Float32, except that
// bfloat16 checkpoint tensors stay bfloat16: widening bf16 to float32 is exact, so computing from
// them gives the same bits as converting at load while reading half the bytes (decode is bound by
// reading the weights). An FP8 layer (gpu/quant/fp8.h) is held as its Fp8Matrix and computes W8A8.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/cpu/fp8_matrix.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cpu {

class Matrix {
 public:
  // Stacks the tensor's rows under the existing ones; its column count must match (checked by
  // the caller's shape check). Mixed dtypes fall back to float32.
  void append(const TensorView& t);

  // The matrix is this FP8 layer (instead of appended tensors).
  void set_fp8(quant::Fp8Weight w);
  const Fp8Matrix* fp8() const { return fp8_.get(); }

  int64_t rows() const { return fp8_ ? fp8_->rows() : rows_; }
  int64_t cols() const { return fp8_ ? fp8_->cols() : cols_; }
  bool is_bf16() const { return !bf16_.empty(); }

  // y[M, rows] = x[M, cols] · this^T (+ bias[rows])
  void apply(const float* x, const float* bias, float* y, int64_t M) const;
  // out[cols] = row r in float32 (embedding lookup)
  void row(int64_t r, float* out) const;

 private:
  int64_t rows_ = 0, cols_ = 0;
  std::vector<float> f32_;
  std::vector<uint16_t> bf16_;
  std::unique_ptr<Fp8Matrix> fp8_;
};

}  // namespace zinfer::gpu::cpu
