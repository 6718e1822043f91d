// An FP8 W8A8 linear layer on the CPU backend, computing gpu/quant/fp8.h's product exactly as
// defined: the activations are quantized per the layer's scheme (e4m3 values in float32), each
// group's Σ x_q · w_q is one float32 GEMM (gpu/cpu/ops.h's linear, over w_q held in bfloat16,
// which represents every e4m3 value exactly), and the scales multiply the group's sums:
//   y[m, n] = Σ_g (s_x[m, g] · s_w[n, g]) · acc_g[m, n]
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/quant/fp8.h"

namespace zinfer::gpu::cpu {

class Fp8Matrix {
 public:
  explicit Fp8Matrix(quant::Fp8Weight w);

  int64_t rows() const { return w_.rows; }
  int64_t cols() const { return w_.cols; }
  const quant::Fp8Weight& weight() const { return w_; }

  // y[M, rows] = W8A8(x[M, cols]) (+ bias[rows])
  void apply(const float* x, const float* bias, float* y, int64_t M) const;
  // out[cols] = w_q · s_w of row r (an embedding lookup, should a table be fp8)
  void row(int64_t r, float* out) const;

 private:
  quant::Fp8Weight w_;
  std::vector<std::vector<uint16_t>> groups_;  // per group: w_q [rows, width] in bf16 bits
};

}  // namespace zinfer::gpu::cpu
