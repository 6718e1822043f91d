// A weight matrix of the CPU backend, [rows, cols] in torch's Linear layout. Float32, except that
// bfloat16 checkpoint tensors stay bfloat16: widening bf16 to float32 is exact, so computing from
// them gives the same bits as converting at load while reading half the bytes (decode is bound by
// reading the weights).
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/safetensors.h"

namespace zinfer::gpu::cpu {

class Matrix {
 public:
  // Stacks the tensor's rows under the existing ones; its column count must match (checked by
  // the caller's shape check). Mixed dtypes fall back to float32.
  void append(const TensorView& t);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  bool is_bf16() const { return !bf16_.empty(); }

  // y[M, rows] = x[M, cols] · this^T (+ bias[rows])
  void apply(const float* x, const float* bias, float* y, int64_t M) const;
  // out[cols] = row r in float32 (embedding lookup)
  void row(int64_t r, float* out) const;

 private:
  int64_t rows_ = 0, cols_ = 0;
  std::vector<float> f32_;
  std::vector<uint16_t> bf16_;
};

}  // namespace zinfer::gpu::cpu
