// What the FP8 layer-case tests (fp8_test.cpp, ct_fp8_test.cpp) share: a tensor's values, the
// message an action throws, and the check of one numpy case (tools/fixtures/make_*fp8_fixtures.py):
// the layer as read gives the case's dense weight bit for bit, and its W8A8 product of the case's
// x is numpy's float64 y within 2e-6 of the largest |y| (the zero third row stays exactly zero).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/cpu/fp8_matrix.h"
#include "gpu/quant/fp8.h"
#include "gpu/safetensors.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu::quant {

template <class T>
std::vector<T> values_of(const TensorView& t) {
  std::vector<T> v(t.nbytes / sizeof(T));
  std::memcpy(v.data(), t.data, t.nbytes);
  return v;
}

using test::error_of;

inline void expect_matches_case(const WeightSet& ws, const std::string& name, const Fp8Weight& w) {
  const int64_t N = w.rows, K = w.cols;
  const std::vector<float> dense = w.to_dense(), want = values_of<float>(ws.get(name + ".reference"));
  ASSERT_EQ(dense.size(), want.size());
  size_t differing = 0;
  for (size_t i = 0; i < want.size(); ++i) differing += dense[i] != want[i];
  EXPECT_EQ(differing, 0u);

  const std::vector<float> x = values_of<float>(ws.get(name + ".x"));
  const std::vector<double> y = values_of<double>(ws.get(name + ".y"));
  const int64_t M = int64_t(x.size()) / K;
  std::vector<float> got(size_t(M * N));
  cpu::Fp8Matrix(w).apply(x.data(), nullptr, got.data(), M);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  EXPECT_LT(worst, 2e-6 * scale) << "largest |y| " << scale;
  for (int64_t n = 0; n < N; ++n) EXPECT_EQ(got[size_t(2 * N + n)], 0.0f);  // the zero row
}

}  // namespace zinfer::gpu::quant
