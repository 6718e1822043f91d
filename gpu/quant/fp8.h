// FP8 W8A8 linear layers in one form, whatever stored them (an "fp8" checkpoint per-tensor,
// per-channel or block-wise, or a bf16 checkpoint quantized at load), and the arithmetic both
// backends compute with it:
//   y[m, n] = Σ_g  s_x[m, g] · s_w[n, g] · Σ_{k ∈ g}  x_q[m, k] · w_q[n, k]
// over the groups g of `group` consecutive inputs (one group of all K, or the 128 columns of a
// block-wise checkpoint), with w_q, x_q e4m3fn values and float32 scales. x_q = e4m3(x · (1 / s_x))
// (1 / s_x and the product each rounded to float32, as vLLM's quantization kernels compute it; then
// rounded to nearest even, saturating at ±448); s_x is, by activation scheme:
//   dynamic  per token and group: max(amax of the group's x, 1e-10) / 448 (vLLM's per-token
//            quantization; for block-wise checkpoints its per_token_group_quant over 128 columns)
//   static   the checkpoint's input_scale, one number for the layer.
// e4m3fn (the "fn" of torch.float8_e4m3fn): 1 sign, 4 exponent bits (bias 7), 3 mantissa bits, no
// infinities, NaN = S.1111.111, largest finite 448, smallest subnormal 2^-9.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zinfer::gpu {
struct TensorView;
}  // namespace zinfer::gpu

namespace zinfer::gpu::quant {

constexpr float kFp8Max = 448.0f;
// The floor on a dynamic group's amax, so that a zero row gets a finite scale (and x_q = 0).
constexpr float kFp8MinAmax = 1e-10f;

// The value of an e4m3fn code (NaN for 0x7F / 0xFF).
float e4m3_to_float(uint8_t code);
// The e4m3fn code nearest to x, ties to even; |x| beyond 448 saturates to ±448 (torch's clamp
// before its cast), NaN stays NaN (0x7F, with x's sign bit).
uint8_t float_to_e4m3(float x);
// e4m3_to_float(float_to_e4m3(x)): x rounded to an e4m3fn value.
inline float round_e4m3(float x) { return e4m3_to_float(float_to_e4m3(x)); }

enum class ActivationScheme { kDynamic, kStatic };
const char* activation_scheme_name(ActivationScheme s);

struct Fp8Weight {
  int64_t rows = 0;                 // N, out features
  int64_t cols = 0;                 // K, in features
  int64_t group = 0;                // inputs per scale group (cols for one group)
  std::vector<uint8_t> q;           // [N, K] e4m3fn codes
  std::vector<float> scale;         // [N, groups()]: s_w of row n over group g
  ActivationScheme activation = ActivationScheme::kDynamic;
  float input_scale = 0;            // static: s_x of every token

  int64_t groups() const { return group > 0 ? (cols + group - 1) / group : 0; }
  float scale_at(int64_t n, int64_t g) const { return scale[static_cast<size_t>(n * groups() + g)]; }
  // W[n, k] = w_q · s_w in float32 (float32 rounds the product: e4m3's 4 significant bits times a
  // float32 scale's 24); for consumers that compute without the activation quantization.
  std::vector<float> to_dense() const;
  // Rows [row_begin, +row_count) and columns [col_begin, +col_count): a tensor-parallel rank's
  // part. Rows past the end read as zeros. A column range must start and end on a group boundary
  // (a block-wise layer's 128); a layer of one group keeps one group over its columns, as vLLM's
  // per-token scale of a row-parallel rank covers the rank's inputs. `what` names the tensor.
  Fp8Weight slice(int64_t row_begin, int64_t row_count, int64_t col_begin, int64_t col_count,
                  const std::string& what) const;
  // Stacks `below`'s rows under these (q, k, v or gate, up into one matrix). The column count,
  // group and scheme must agree; a static layer takes the larger input_scale (vLLM's choice for a
  // fused layer whose parts were calibrated apart). `what` names the tensor in errors.
  void append(Fp8Weight below, const std::string& what);
};

// Quantizes a dense weight [N, K] per output channel: s_w[n] = max(amax of row n, 1e-10) / 448,
// w_q = e4m3(w / s_w), activations dynamic per token (online FP8).
Fp8Weight quantize_per_channel(const float* w, int64_t rows, int64_t cols);
// The same of a checkpoint's matrix [N, K] in F32, F16 or BF16.
Fp8Weight quantize_per_channel(const TensorView& w);

// The activation side of the product for rows x [M, K]: x_q as float values (exactly e4m3 values)
// and s_x [M, groups]. `group` and `scheme` as in Fp8Weight.
void quantize_activations(const float* x, int64_t M, int64_t K, int64_t group, ActivationScheme scheme,
                          float input_scale, float* x_q, float* s_x);

}  // namespace zinfer::gpu::quant
