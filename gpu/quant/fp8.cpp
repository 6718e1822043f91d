#include "gpu/quant/fp8.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {
namespace {

std::array<float, 256> decode_table() {
  std::array<float, 256> t{};
  for (int c = 0; c < 256; ++c) {
    const int e = (c >> 3) & 0xF, m = c & 7;
    float v;
    if (e == 0xF && m == 7) v = std::numeric_limits<float>::quiet_NaN();
    else if (e == 0) v = std::ldexp(static_cast<float>(m), -9);            // subnormal: m/8 · 2^-6
    else v = std::ldexp(static_cast<float>(8 + m), e - 7 - 3);              // (1 + m/8) · 2^(e-7)
    t[static_cast<size_t>(c)] = (c & 0x80) ? -v : v;
  }
  return t;
}

const std::array<float, 256> kDecode = decode_table();

[[noreturn]] void fail(const std::string& what, const std::string& why) {
  throw SafetensorsError("tensor " + what + ": " + why);
}

float amax_of(const float* x, int64_t n) {
  float a = 0;
  for (int64_t i = 0; i < n; ++i) a = std::max(a, std::fabs(x[i]));
  return a;
}

}  // namespace

float e4m3_to_float(uint8_t code) { return kDecode[code]; }

uint8_t float_to_e4m3(float x) {
  // On x's bits (online FP8 encodes billions of weights at load: integer steps, no library calls).
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  bits &= 0x7FFFFFFFu;
  if (bits > 0x7F800000u) return sign | 0x7F;  // NaN
  if (bits >= 0x43E00000u) return sign | 0x7E;  // 448 and beyond (infinity too) saturate
  if (bits < 0x3C800000u) {
    // Below 2^-6, the subnormals and the smallest normal continue one integer step of 2^-9:
    // code = |x| · 2^9 (exact), rounded by nearbyint in the default mode, to nearest even.
    float a = 0;
    std::memcpy(&a, &bits, sizeof a);
    return sign | static_cast<uint8_t>(std::nearbyint(a * 0x1p9f));
  }
  // A normal code is float32's exponent (rebiased from 127 to 7) and its mantissa's top 3 bits:
  // round the other 20 away, to nearest even; a carry moves into the exponent, as the code's
  // integer layout wants. Below 448 nothing rounds past 448 (0x7E).
  const uint32_t rounded = (bits + 0x7FFFFu + ((bits >> 20) & 1u)) >> 20;
  return sign | static_cast<uint8_t>(std::min<uint32_t>(rounded - ((127u - 7u) << 3), 0x7Eu));
}

const char* activation_scheme_name(ActivationScheme s) { return s == ActivationScheme::kStatic ? "static" : "dynamic"; }

std::vector<float> Fp8Weight::to_dense() const {
  std::vector<float> w(q.size());
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t k = 0; k < cols; ++k)
      w[static_cast<size_t>(n * cols + k)] = kDecode[q[static_cast<size_t>(n * cols + k)]] * scale_at(n, k / group);
  return w;
}

Fp8Weight Fp8Weight::slice(int64_t row_begin, int64_t row_count, int64_t col_begin, int64_t col_count,
                           const std::string& what) const {
  if (row_begin < 0 || row_count < 0 || col_begin < 0 || col_count <= 0 || col_begin + col_count > cols)
    fail(what, "a slice outside the tensor");
  const bool one_group = groups() == 1;
  if (!one_group && (col_begin % group != 0 || (col_count % group != 0 && col_begin + col_count != cols)))
    fail(what, "columns [" + std::to_string(col_begin) + ", " + std::to_string(col_begin + col_count) +
                   ") of a tensor-parallel rank do not fall on its scale blocks of " + std::to_string(group) +
                   " inputs");
  Fp8Weight out;
  out.rows = row_count;
  out.cols = col_count;
  out.group = one_group ? col_count : group;
  out.activation = activation;
  out.input_scale = input_scale;
  const int64_t G = out.groups(), g0 = one_group ? 0 : col_begin / group;
  out.q.assign(static_cast<size_t>(row_count * col_count), 0);
  out.scale.assign(static_cast<size_t>(row_count * G), 0.0f);
  for (int64_t r = 0; r < row_count; ++r) {
    const int64_t n = row_begin + r;
    if (n >= rows) continue;  // a padded vocabulary's rows: zeros
    std::copy_n(q.begin() + n * cols + col_begin, col_count, out.q.begin() + r * col_count);
    for (int64_t g = 0; g < G; ++g) out.scale[static_cast<size_t>(r * G + g)] = scale_at(n, g0 + g);
  }
  return out;
}

void Fp8Weight::append(Fp8Weight below, const std::string& what) {
  if (rows == 0) {
    *this = std::move(below);
    return;
  }
  if (below.cols != cols) fail(what, "has " + std::to_string(below.cols) + " columns, its fused layer " + std::to_string(cols));
  if (below.group != group)
    fail(what, "is scaled in groups of " + std::to_string(below.group) + " inputs, the rest of its fused layer in " +
                   std::to_string(group));
  if (below.activation != activation)
    fail(what, std::string("has activation scheme ") + activation_scheme_name(below.activation) +
                   ", the rest of its fused layer " + activation_scheme_name(activation));
  rows += below.rows;
  q.insert(q.end(), below.q.begin(), below.q.end());
  scale.insert(scale.end(), below.scale.begin(), below.scale.end());
  input_scale = std::max(input_scale, below.input_scale);
}

namespace {

// row(n, buffer) gives row n's cols values, in buffer or elsewhere.
template <typename Row>
Fp8Weight quantize_rows(int64_t rows, int64_t cols, const Row& row) {
  Fp8Weight out;
  out.rows = rows;
  out.cols = cols;
  out.group = cols;
  out.activation = ActivationScheme::kDynamic;
  out.q.resize(static_cast<size_t>(rows * cols));
  out.scale.resize(static_cast<size_t>(rows));
  // Online FP8 quantizes every linear layer of a model at load (billions of values): the rows are
  // split over the host's cores, each row's codes the same whoever computes them.
#pragma omp parallel if (rows * cols >= (1 << 20))
  {
    std::vector<float> buffer(static_cast<size_t>(cols));
#pragma omp for schedule(static)
    for (int64_t n = 0; n < rows; ++n) {
      const float* values = row(n, buffer.data());
      const float s = std::max(amax_of(values, cols), kFp8MinAmax) / kFp8Max;
      out.scale[static_cast<size_t>(n)] = s;
      uint8_t* q = out.q.data() + n * cols;
      for (int64_t k = 0; k < cols; ++k) q[k] = float_to_e4m3(values[k] / s);
    }
  }
  return out;
}

}  // namespace

Fp8Weight quantize_per_channel(const float* w, int64_t rows, int64_t cols) {
  return quantize_rows(rows, cols, [&](int64_t n, float*) { return w + n * cols; });
}

Fp8Weight quantize_per_channel(const TensorView& w) {
  if (w.shape.size() != 2) fail(w.name, "is not a matrix; only linear layers' weights are quantized");
  const int64_t rows = w.shape[0], cols = w.shape[1];
  // Each row converted where it is quantized: no float32 copy of the whole layer (a 28,672 x 4,096
  // gate/up projection is 470 MB of it, whose first touch cost more than the quantization).
  return quantize_rows(rows, cols, [&](int64_t n, float* buffer) {
    to_float32(w, n * cols, cols, buffer);
    return static_cast<const float*>(buffer);
  });
}

void quantize_activations(const float* x, int64_t M, int64_t K, int64_t group, ActivationScheme scheme,
                          float input_scale, float* x_q, float* s_x) {
  const int64_t G = (K + group - 1) / group;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t g = 0; g < G; ++g) {
      const int64_t k0 = g * group, width = std::min(group, K - k0);
      const float* in = x + m * K + k0;
      const float s = scheme == ActivationScheme::kStatic ? input_scale
                                                          : std::max(amax_of(in, width), kFp8MinAmax) / kFp8Max;
      s_x[m * G + g] = s;
      const float inverse = 1.0f / s;
      for (int64_t k = 0; k < width; ++k) x_q[m * K + k0 + k] = round_e4m3(in[k] * inverse);
    }
  }
}

}  // namespace zinfer::gpu::quant
