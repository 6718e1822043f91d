#include "gpu/quant/fp8_checkpoint.h"

#include <cmath>
#include <cstring>

#include "gpu/quant/packed.h"

namespace zinfer::gpu::quant {

bool per_tensor_shape(const std::vector<int64_t>& shape) {
  return shape.empty() || shape == std::vector<int64_t>{1};
}

Fp8Weight e4m3_weight(const TensorView& w, const std::vector<int64_t>& shape, const std::string& e5m2_why,
                      const std::string& layer) {
  if (w.dtype == DType::kF8E5M2) tensor_error(w, "float8_e5m2 weights are not supported (" + e5m2_why + ")");
  if (w.dtype != DType::kF8E4M3) tensor_error(w, std::string("dtype ") + dtype_name(w.dtype) + " in " + layer + " (F8_E4M3)");
  if (w.shape != shape) tensor_error(w, "shape " + shape_string(w.shape) + ", expected " + shape_string(shape));
  Fp8Weight out;
  out.rows = shape[0];
  out.cols = shape[1];
  out.q.resize(static_cast<size_t>(out.rows * out.cols));
  std::memcpy(out.q.data(), w.data, out.q.size());
  return out;
}

std::vector<float> fp8_scale_values(const TensorView& t) {
  if (t.dtype != DType::kF32 && t.dtype != DType::kBF16 && t.dtype != DType::kF16)
    tensor_error(t, std::string("dtype ") + dtype_name(t.dtype) + " for a scale (F32, BF16, F16)");
  std::vector<float> v(static_cast<size_t>(t.numel()));
  to_float32(t, v.data());
  for (float x : v)
    if (!std::isfinite(x) || x < 0) tensor_error(t, "holds " + std::to_string(x) + ", not a finite scale >= 0");
  return v;
}

Fp8Weight read_fp8_layer(const WeightSet& ws, const QuantConfig& c, const std::string& prefix,
                         const std::vector<int64_t>& shape) {
  const TensorView& w = ws.get(prefix + "weight");
  Fp8Weight out = e4m3_weight(w, shape, "fp8 checkpoints store float8_e4m3fn", "an fp8 layer");
  const int64_t N = shape[0], K = shape[1];
  out.activation = c.activation_scheme;

  const bool has_scale = ws.has(prefix + "weight_scale"), has_inv = ws.has(prefix + "weight_scale_inv");
  if (c.block_n > 0) {
    if (has_scale)
      tensor_error(ws.get(prefix + "weight_scale"), "a block-wise checkpoint (weight_block_size in " + c.origin +
                                                  ") scales its layers by weight_scale_inv");
    if (!has_inv) tensor_error(w, "its " + prefix + "weight_scale_inv is missing (weight_block_size in " + c.origin + ")");
    const TensorView& s = ws.get(prefix + "weight_scale_inv");
    const int64_t bn = c.block_n, bk = c.block_k, NB = (N + bn - 1) / bn, KB = (K + bk - 1) / bk;
    if (s.shape != std::vector<int64_t>{NB, KB})
      tensor_error(s, "shape " + shape_string(s.shape) + ", expected " + shape_string({NB, KB}) + " (blocks of " +
                    std::to_string(bn) + " x " + std::to_string(bk) + " over " + shape_string(shape) + ")");
    const std::vector<float> v = fp8_scale_values(s);
    out.group = bk;
    out.scale.resize(static_cast<size_t>(N * KB));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < KB; ++g) out.scale[static_cast<size_t>(n * KB + g)] = v[static_cast<size_t>((n / bn) * KB + g)];
  } else {
    if (has_inv)
      tensor_error(ws.get(prefix + "weight_scale_inv"),
             "a block scale, but " + c.origin + " has no quantization_config.weight_block_size");
    if (!has_scale) tensor_error(w, "its " + prefix + "weight_scale is missing from the checkpoint");
    const TensorView& s = ws.get(prefix + "weight_scale");
    const std::vector<float> v = fp8_scale_values(s);
    out.group = K;
    if (per_tensor_shape(s.shape)) out.scale.assign(static_cast<size_t>(N), v[0]);
    else if (s.shape == std::vector<int64_t>{N} || s.shape == std::vector<int64_t>{N, 1}) out.scale = v;
    else
      tensor_error(s, "shape " + shape_string(s.shape) + ", expected [] or [1] (per tensor) or [" + std::to_string(N) +
                    "] / [" + std::to_string(N) + ", 1] (per channel)");
  }

  const bool has_input = ws.has(prefix + "input_scale");
  if (c.activation_scheme == ActivationScheme::kStatic) {
    if (!has_input) tensor_error(w, "its " + prefix + "input_scale is missing (activation_scheme static in " + c.origin + ")");
    const TensorView& s = ws.get(prefix + "input_scale");
    if (!per_tensor_shape(s.shape)) tensor_error(s, "shape " + shape_string(s.shape) + ", expected [] or [1] (per tensor)");
    out.input_scale = fp8_scale_values(s)[0];
    if (!(out.input_scale > 0)) tensor_error(s, "is zero; a static input scale divides the activations");
  } else if (has_input) {
    tensor_error(ws.get(prefix + "input_scale"),
           "a static input scale, but quantization_config.activation_scheme is dynamic in " + c.origin);
  }
  return out;
}

}  // namespace zinfer::gpu::quant
