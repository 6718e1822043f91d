// GPTQ (dequantize.h): unpack qweight along K and qzeros along N, map each input row to its group
// (g_idx under act-order): W[n, k] = scale[g, n] · (q[k, n] − zero[g, n]) as an IntWeight.
#include <string>

#include "gpu/quant/dequantize.h"
#include "gpu/quant/packed.h"

namespace zinfer::gpu::quant {

IntWeight unpack_gptq(const QuantConfig& c, const QuantizedTensors& t) {
  const TensorView& qweight = require_2d(t.qweight, "qweight");
  const TensorView& qzeros = require_2d(t.qzeros, "qzeros");
  const TensorView& scales = require_2d(t.scales, "scales");
  require_dtype(qweight, DType::kI32);
  require_dtype(qzeros, DType::kI32);
  const int32_t bits = c.bits, pack = c.pack();
  const int64_t K = qweight.shape[0] * pack, N = qweight.shape[1];
  if (N % pack != 0) tensor_error(qweight, std::to_string(N) + " outputs cannot be packed " + std::to_string(pack) +
                                               " to a word in qzeros");
  const int64_t groups = group_count(c, K, qweight);
  require_shape(qzeros, {groups, N / pack});
  require_shape(scales, {groups, N});
  std::vector<float> scale = scales_to_float(scales);

  // The group of each input row: g_idx (act-order permutes rows across groups), else contiguous.
  IntWeight w;
  w.rows = N, w.cols = K, w.bits = bits, w.groups = groups, w.group_size = c.group_size == -1 ? K : c.group_size;
  std::vector<int32_t> group(static_cast<size_t>(K));
  if (t.g_idx != nullptr) {
    require_dtype(*t.g_idx, DType::kI32);
    require_shape(*t.g_idx, {K});
    for (int64_t k = 0; k < K; ++k) {
      group[k] = int32_at(*t.g_idx, k);
      if (group[k] < 0 || group[k] >= groups)
        tensor_error(*t.g_idx, "entry " + std::to_string(k) + " is group " + std::to_string(group[k]) + " of " +
                                   std::to_string(groups));
    }
    if (!c.desc_act) {  // without act-order g_idx must be the contiguous grouping it implies
      for (int64_t k = 0; k < K; ++k)
        if (group[k] != (c.group_size == -1 ? 0 : k / c.group_size))
          tensor_error(*t.g_idx, "entry " + std::to_string(k) + " is not k / group_size although quantization_config"
                                 ".desc_act is false (" + c.origin + ")");
    }
  } else {
    if (c.desc_act)
      tensor_error(qweight, "its g_idx tensor is missing although quantization_config.desc_act is true (" + c.origin +
                                ")");
    for (int64_t k = 0; k < K; ++k) group[k] = c.group_size == -1 ? 0 : static_cast<int32_t>(k / c.group_size);
  }

  // Zero points [groups, N] as integers.
  const int32_t offset = c.zeros_offset ? 1 : 0, sym_zero = 1 << (bits - 1);
  std::vector<int32_t> zero(static_cast<size_t>(groups * N));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < N; ++n) {
      const int32_t word = int32_at(qzeros, g * (N / pack) + n / pack);
      zero[g * N + n] = field_of(word, static_cast<int32_t>(n % pack), bits) + offset;
      if (c.sym && zero[g * N + n] != sym_zero)
        tensor_error(qzeros, "group " + std::to_string(g) + " column " + std::to_string(n) + " has zero point " +
                                 std::to_string(zero[g * N + n]) + " although quantization_config.sym is true (" +
                                 c.origin + ")");
    }

  w.q.resize(static_cast<size_t>(N * K));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      w.q[n * K + k] =
          static_cast<uint8_t>(field_of(int32_at(qweight, (k / pack) * N + n), static_cast<int32_t>(k % pack), bits));
  w.zero = std::move(zero);
  w.scale = std::move(scale);
  if (c.desc_act) w.g_idx = std::move(group);
  return w;
}

}  // namespace zinfer::gpu::quant
