#include "gpu/quant/ct_fp8.h"

#include "gpu/quant/fp8_checkpoint.h"
#include "gpu/quant/packed.h"

namespace zinfer::gpu::quant {

Fp8Weight read_ct_fp8_layer(const WeightSet& ws, const CtGroup& g, const std::string& prefix,
                            const std::vector<int64_t>& shape, const std::string& origin) {
  const std::string scheme = "config_groups." + g.name + " in " + origin;
  const TensorView& w = ws.get(prefix + "weight");
  Fp8Weight out =
      e4m3_weight(w, shape, "float-quantized 8-bit floats are float8_e4m3fn", "a float-quantized layer");
  const int64_t N = shape[0], K = shape[1];
  out.activation = g.activation;

  if (ws.has(prefix + "weight_scale_inv"))
    tensor_error(ws.get(prefix + "weight_scale_inv"), "compressed-tensors names every weight scale weight_scale (" + scheme + ")");
  if (!ws.has(prefix + "weight_scale")) tensor_error(w, "its " + prefix + "weight_scale is missing from the checkpoint");
  const TensorView& s = ws.get(prefix + "weight_scale");
  const std::vector<float> v = fp8_scale_values(s);
  if (g.block_n > 0) {
    const int64_t bn = g.block_n, bk = g.block_k, NB = (N + bn - 1) / bn, KB = (K + bk - 1) / bk;
    if (s.shape != std::vector<int64_t>{NB, KB})
      tensor_error(s, "shape " + shape_string(s.shape) + ", expected " + shape_string({NB, KB}) + " (blocks of " +
                    std::to_string(bn) + " x " + std::to_string(bk) + " over " + shape_string(shape) + ", " + scheme + ")");
    out.group = bk;
    out.scale.resize(static_cast<size_t>(N * KB));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t b = 0; b < KB; ++b) out.scale[static_cast<size_t>(n * KB + b)] = v[static_cast<size_t>((n / bn) * KB + b)];
  } else if (g.per_tensor) {
    if (!per_tensor_shape(s.shape))
      tensor_error(s, "shape " + shape_string(s.shape) + ", expected [] or [1] (strategy 'tensor', " + scheme + ")");
    out.group = K;
    out.scale.assign(static_cast<size_t>(N), v[0]);
  } else {
    if (s.shape != std::vector<int64_t>{N, 1} && s.shape != std::vector<int64_t>{N})
      tensor_error(s, "shape " + shape_string(s.shape) + ", expected [" + std::to_string(N) + ", 1] (strategy 'channel', " +
                    scheme + ")");
    out.group = K;
    out.scale = v;
  }

  const bool has_input = ws.has(prefix + "input_scale");
  if (g.activation == ActivationScheme::kStatic) {
    if (!has_input) tensor_error(w, "its " + prefix + "input_scale is missing (static input_activations, " + scheme + ")");
    const TensorView& in = ws.get(prefix + "input_scale");
    if (!per_tensor_shape(in.shape)) tensor_error(in, "shape " + shape_string(in.shape) + ", expected [] or [1] (strategy 'tensor')");
    out.input_scale = fp8_scale_values(in)[0];
    if (!(out.input_scale > 0)) tensor_error(in, "is zero; a static input scale divides the activations");
  } else if (has_input) {
    tensor_error(ws.get(prefix + "input_scale"), "a static input scale, but the input_activations of " + scheme +
                                               " are dynamic");
  }
  for (const char* role : kCtFp8ZeroRoles)
    if (ws.has(prefix + role) && !all_zero(ws.get(prefix + role)))
      tensor_error(ws.get(prefix + role),
                   "is not zero, but config_groups." + g.name + " is symmetric (FP8 scales have no zero point)");
  return out;
}

}  // namespace zinfer::gpu::quant
