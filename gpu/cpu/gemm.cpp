// linear(): y = x · w^T with both operands contiguous along K. A micro-kernel computes an MR x NR
// tile of y with MR*NR AVX2 accumulators, loading each x row once per 8 k and streaming the w rows
// (the registers: MR x-vectors + 1 w-vector + MR*NR accumulators <= 16). Threads split N into
// chunks of w rows so that each w row is read from memory once per call (decode is GEMV-shaped and
// bound by reading the weights).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gpu/cpu/ops.h"

namespace zinfer::gpu::cpu {
namespace {

inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);                 // 4 lanes
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));        // 2 lanes
  s = _mm_add_ss(s, _mm_movehdup_ps(s));         // 1 lane
  return _mm_cvtss_f32(s);
}

// Eight weights as floats: float32 loads directly; bfloat16 is the high half of a float32, so
// widening is exact (a shift) and a bf16 matrix gives bit-identical results at half the bytes.
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const uint16_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
inline float load1(const float* p) { return *p; }
inline float load1(const uint16_t* p) {
  const uint32_t bits = static_cast<uint32_t>(*p) << 16;
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename W, int MR, int NR>
void tile(const float* x, const W* w, const float* bias, float* y, int64_t K, int64_t ldy) {
  __m256 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
  const int64_t k8 = K & ~int64_t{7};
  for (int64_t k = 0; k < k8; k += 8) {
    __m256 xv[MR];
    for (int i = 0; i < MR; ++i) xv[i] = _mm256_loadu_ps(x + i * K + k);
    for (int j = 0; j < NR; ++j) {
      __m256 wv = load8(w + j * K + k);
      for (int i = 0; i < MR; ++i) acc[i][j] = _mm256_fmadd_ps(xv[i], wv, acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      float s = hsum(acc[i][j]);
      for (int64_t k = k8; k < K; ++k) s = std::fma(x[i * K + k], load1(w + j * K + k), s);
      y[i * ldy + j] = bias ? s + bias[j] : s;
    }
  }
}

template <typename W>
using TileFn = void (*)(const float*, const W*, const float*, float*, int64_t, int64_t);

constexpr int kMR = 3;
constexpr int kNR = 4;

// kTiles<W>[mr - 1][nr - 1] handles the edge tiles with the same summation order as the full ones.
template <typename W>
constexpr TileFn<W> kTiles[kMR][kNR] = {
    {tile<W, 1, 1>, tile<W, 1, 2>, tile<W, 1, 3>, tile<W, 1, 4>},
    {tile<W, 2, 1>, tile<W, 2, 2>, tile<W, 2, 3>, tile<W, 2, 4>},
    {tile<W, 3, 1>, tile<W, 3, 2>, tile<W, 3, 3>, tile<W, 3, 4>},
};

template <typename W>
void linear_any(const float* x, const W* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  // A chunk of w rows small enough to stay in L2 while every x row passes over it.
  const int64_t chunk = std::max<int64_t>(
      kNR, std::min<int64_t>(64, (256 << 10) / (int64_t(sizeof(W)) * std::max<int64_t>(K, 1))) / kNR * kNR);
  const int64_t num_chunks = (N + chunk - 1) / chunk;
  // A parallel region costs microseconds (far more when the cores are shared): only large products pay.
  const bool parallel = M * N * K >= (1 << 21) && num_chunks > 1;
  // Dynamic: when a core is shared and one thread is descheduled, the others take its chunks.
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
  for (int64_t c = 0; c < num_chunks; ++c) {
    const int64_t n_begin = c * chunk;
    const int64_t n_end = std::min(N, n_begin + chunk);
    for (int64_t m = 0; m < M; m += kMR) {
      const int mr = static_cast<int>(std::min<int64_t>(kMR, M - m));
      for (int64_t n = n_begin; n < n_end; n += kNR) {
        const int nr = static_cast<int>(std::min<int64_t>(kNR, n_end - n));
        kTiles<W>[mr - 1][nr - 1](x + m * K, w + n * K, bias ? bias + n : nullptr, y + m * N + n, K, N);
      }
    }
  }
}

}  // namespace

float dot(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  const int64_t n8 = n & ~int64_t{7};
  for (int64_t k = 0; k < n8; k += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), acc);
  float s = hsum(acc);
  for (int64_t k = n8; k < n; ++k) s = std::fma(a[k], b[k], s);
  return s;
}

void linear(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  linear_any(x, w, bias, y, M, N, K);
}

void linear_bf16(const float* x, const uint16_t* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K) {
  linear_any(x, w, bias, y, M, N, K);
}

}  // namespace zinfer::gpu::cpu
