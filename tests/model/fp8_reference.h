// The W8A8 arithmetic of gpu/quant/fp8.h written again for tests, in float64 and from the bits:
// e4m3fn decoded from its layout, rounding by search over the 256 values (ties to the even code),
// and a linear layer of an fp8 checkpoint as ReferenceForward::linear (reference_forward.h) — each
// token's x quantized per the checkpoint's scheme (the fused q/k/v and gate/up layers' static
// input scale is the largest of their parts', as vLLM fuses them), then Σ_g s_x s_w Σ x_q w_q.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/safetensors.h"
#include "reference_forward.h"

namespace zinfer::gpu::test {

inline double e4m3_value(uint8_t c) {
  const int e = (c >> 3) & 15, m = c & 7;
  double v = e == 15 && m == 7 ? std::numeric_limits<double>::quiet_NaN()
             : e == 0          ? m / 8.0 * std::ldexp(1.0, -6)
                               : (1 + m / 8.0) * std::ldexp(1.0, e - 7);
  return (c & 0x80) ? -v : v;
}

// The e4m3fn value nearest x: ties to the even code, saturating at ±448.
inline double e4m3_round(double x) {
  if (std::isnan(x)) return x;
  const double a = std::min(std::fabs(x), 448.0);
  int best = 0;
  for (int c = 1; c <= 126; ++c) {
    const double d = std::fabs(e4m3_value(uint8_t(c)) - a), db = std::fabs(e4m3_value(uint8_t(best)) - a);
    if (d < db || (d == db && c % 2 == 0)) best = c;
  }
  return std::copysign(e4m3_value(uint8_t(best)), x);
}

class Fp8Reference {
 public:
  using Mat = ReferenceForward::Mat;
  // `quantization_config` as config.json has it: quant_method fp8, or compressed-tensors with
  // per-tensor or per-channel weights, where a layer's inputs are static when it has an input_scale
  // (the loader requires it under a static scheme and refuses it under a dynamic one).
  Fp8Reference(const std::string& dir, const nlohmann::json& quantization_config) : w_(dir) {
    static_ = quantization_config.value("activation_scheme", "dynamic") == "static";
    ct_ = quantization_config.value("quant_method", "") == "compressed-tensors";
    if (quantization_config.contains("weight_block_size")) {
      block_n_ = quantization_config["weight_block_size"][0].get<int64_t>();
      block_k_ = quantization_config["weight_block_size"][1].get<int64_t>();
    }
  }

  Mat operator()(const std::string& weight, const Mat& x) const {
    const std::string prefix = weight.substr(0, weight.size() - 6);
    const TensorView& t = w_.get(weight);
    const int64_t N = t.shape[0], K = t.shape[1];
    const auto* codes = reinterpret_cast<const uint8_t*>(t.data);
    const int64_t group = block_k_ > 0 ? block_k_ : K;
    auto w_scale = [&](int64_t n, int64_t g) {
      if (block_k_ > 0) return value(prefix + "weight_scale_inv", (n / block_n_) * ((K + block_k_ - 1) / block_k_) + g);
      const TensorView& s = w_.get(prefix + "weight_scale");
      return value(prefix + "weight_scale", s.numel() == 1 ? 0 : n);
    };
    Mat y(x.size(), std::vector<double>(size_t(N), 0.0));
    for (size_t m = 0; m < x.size(); ++m) {
      for (int64_t g0 = 0; g0 < K; g0 += group) {
        const int64_t g1 = std::min(K, g0 + group);
        double amax = 0;
        for (int64_t k = g0; k < g1; ++k) amax = std::max(amax, std::fabs(x[m][size_t(k)]));
        const bool is_static = ct_ ? w_.has(prefix + "input_scale") : static_;
        const double sx = is_static ? input_scale(prefix) : std::max(amax, 1e-10) / 448.0;
        std::vector<double> xq(size_t(g1 - g0));
        for (int64_t k = g0; k < g1; ++k) xq[size_t(k - g0)] = e4m3_round(x[m][size_t(k)] / sx);
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (int64_t k = g0; k < g1; ++k) acc += xq[size_t(k - g0)] * e4m3_value(codes[n * K + k]);
          y[m][size_t(n)] += sx * w_scale(n, g0 / group) * acc;
        }
      }
    }
    return y;
  }

 private:
  double value(const std::string& name, int64_t i) const {
    const TensorView& t = w_.get(name);
    std::vector<float> v(size_t(t.numel()));
    to_float32(t, v.data());
    return v[size_t(i)];
  }
  // The largest input_scale of the layer's fused parts.
  double input_scale(const std::string& prefix) const {
    static const std::vector<std::vector<std::string>> kFused = {{"q_proj", "k_proj", "v_proj"}, {"gate_proj", "up_proj"}};
    double s = value(prefix + "input_scale", 0);
    for (const auto& parts : kFused)
      for (const std::string& p : parts)
        if (const auto at = prefix.rfind(p); at != std::string::npos)
          for (const std::string& other : parts)
            s = std::max(s, value(prefix.substr(0, at) + other + ".input_scale", 0));
    return s;
  }

  WeightSet w_;
  bool static_ = false, ct_ = false;
  int64_t block_n_ = 0, block_k_ = 0;
};

}  // namespace zinfer::gpu::test
