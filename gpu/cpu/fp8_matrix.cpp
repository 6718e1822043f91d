#include "gpu/cpu/fp8_matrix.h"

#include <algorithm>
#include <cstring>

#include "gpu/cpu/ops.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::cpu {

Fp8Matrix::Fp8Matrix(quant::Fp8Weight w) : w_(std::move(w)) {
  const int64_t N = w_.rows, K = w_.cols, G = w_.groups();
  groups_.resize(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; ++g) {
    const int64_t k0 = g * w_.group, width = std::min(w_.group, K - k0);
    std::vector<uint16_t>& out = groups_[static_cast<size_t>(g)];
    out.resize(static_cast<size_t>(N * width));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < width; ++k)
        out[static_cast<size_t>(n * width + k)] =
            float_to_bf16(quant::e4m3_to_float(w_.q[static_cast<size_t>(n * K + k0 + k)]));  // exact
  }
}

void Fp8Matrix::apply(const float* x, const float* bias, float* y, int64_t M) const {
  const int64_t N = w_.rows, K = w_.cols, G = w_.groups();
  std::vector<float> xq(static_cast<size_t>(M * K)), sx(static_cast<size_t>(M * G));
  quant::quantize_activations(x, M, K, w_.group, w_.activation, w_.input_scale, xq.data(), sx.data());
  std::vector<float> part(static_cast<size_t>(M * N)), xg;
  for (int64_t g = 0; g < G; ++g) {
    const int64_t k0 = g * w_.group, width = std::min(w_.group, K - k0);
    const float* xin = xq.data();
    if (G > 1) {  // the group's columns, contiguous
      xg.resize(static_cast<size_t>(M * width));
      for (int64_t m = 0; m < M; ++m) std::memcpy(xg.data() + m * width, xq.data() + m * K + k0, width * sizeof(float));
      xin = xg.data();
    }
    linear_bf16(xin, groups_[static_cast<size_t>(g)].data(), nullptr, part.data(), M, N, width);
    for (int64_t m = 0; m < M; ++m) {
      const float s = sx[static_cast<size_t>(m * G + g)];
      for (int64_t n = 0; n < N; ++n) {
        const float v = part[static_cast<size_t>(m * N + n)] * (s * w_.scale_at(n, g));
        y[m * N + n] = g == 0 ? v : y[m * N + n] + v;
      }
    }
  }
  if (bias != nullptr)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) y[m * N + n] += bias[n];
}

void Fp8Matrix::row(int64_t r, float* out) const {
  for (int64_t k = 0; k < w_.cols; ++k)
    out[k] = quant::e4m3_to_float(w_.q[static_cast<size_t>(r * w_.cols + k)]) * w_.scale_at(r, k / w_.group);
}

}  // namespace zinfer::gpu::cpu
