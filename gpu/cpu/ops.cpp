// Element-wise and per-row ops of the CPU backend (see ops.h for shapes).
#include <cmath>
#include <cstring>
#include <vector>

#include "gpu/cpu/ops.h"

namespace zinfer::gpu::cpu {

void rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t dim, float eps) {
#pragma omp parallel for schedule(static) if (rows * dim >= (1 << 20))
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = out + r * dim;
    double sum_sq = 0.0;  // double: the mean of squares should not depend on dim's size
    for (int64_t i = 0; i < dim; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(dim) + eps));
    for (int64_t i = 0; i < dim; ++i) yr[i] = weight[i] * (xr[i] * inv);
  }
}

void rope(float* x, int64_t T, int64_t num_heads, int64_t head_dim, const int32_t* positions, const float* inv_freq) {
  const int64_t half = head_dim / 2;
#pragma omp parallel if (T * num_heads * head_dim >= (1 << 20))
  {
    std::vector<float> cos_t(half), sin_t(half);
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) {
      // The angle is formed in float32 as transformers does (pos * inv_freq), then cos/sin.
      for (int64_t i = 0; i < half; ++i) {
        const float angle = static_cast<float>(positions[t]) * inv_freq[i];
        cos_t[i] = static_cast<float>(std::cos(static_cast<double>(angle)));
        sin_t[i] = static_cast<float>(std::sin(static_cast<double>(angle)));
      }
      for (int64_t h = 0; h < num_heads; ++h) {
        float* v = x + (t * num_heads + h) * head_dim;
        for (int64_t i = 0; i < half; ++i) {
          const float a = v[i], b = v[i + half];
          v[i] = a * cos_t[i] - b * sin_t[i];
          v[i + half] = b * cos_t[i] + a * sin_t[i];
        }
      }
    }
  }
}

void silu_mul(const float* gate_up, float* out, int64_t T, int64_t I) {
#pragma omp parallel for schedule(static) if (T * I >= (1 << 20))
  for (int64_t t = 0; t < T; ++t) {
    const float* g = gate_up + t * 2 * I;
    const float* u = g + I;
    float* o = out + t * I;
    for (int64_t i = 0; i < I; ++i) o[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  }
}

void add_inplace(float* x, const float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace zinfer::gpu::cpu
