// compressed-tensors pack-quantized (dequantize.h): weight_packed holds each row's inputs packed
// along K and weight_zero_point each group's zeros packed along N, both as the signed value plus
// 2^(bits−1). Those stored fields are IntWeight's unsigned q and zero as they are, so
// W[n, k] = scale[n, g] · (q[n, k] − zero[g, n]) needs no shift; a symmetric layer's zero is the
// offset 2^(bits−1) itself (its signed zero is 0).
#include <cstring>
#include <string>
#include <utility>

#include "gpu/quant/dequantize.h"
#include "gpu/quant/packed.h"

namespace zinfer::gpu::quant {
namespace {

std::string dims(int64_t a, int64_t b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + "]"; }

// weight_shape: the true [N, K] the packing padded, int64 as torch writes it (int32 accepted).
std::pair<int64_t, int64_t> true_shape(const TensorView& s) {
  if (s.dtype != DType::kI64 && s.dtype != DType::kI32)
    tensor_error(s, std::string("dtype ") + dtype_name(s.dtype) + ", expected I64 (or I32)");
  require_shape(s, {2});
  int64_t v[2];
  for (int i = 0; i < 2; ++i) {
    if (s.dtype == DType::kI32) {
      v[i] = int32_at(s, i);
    } else {
      std::memcpy(&v[i], s.data + static_cast<size_t>(i) * 8, 8);
    }
    if (v[i] <= 0) tensor_error(s, "entry " + std::to_string(i) + " is " + std::to_string(v[i]) + ", not a size");
  }
  return {v[0], v[1]};
}

}  // namespace

IntWeight unpack_compressed_tensors(const QuantConfig& c, const QuantizedTensors& t) {
  const TensorView& packed = require_2d(t.qweight, "weight_packed");
  require_dtype(packed, DType::kI32);
  if (t.shape == nullptr) tensor_error(packed, "its weight_shape tensor is missing");
  if (t.scales == nullptr) tensor_error(packed, "its weight_scale tensor is missing");
  const auto [N, K] = true_shape(*t.shape);
  const int32_t bits = c.bits, pack = c.pack();
  const int64_t words = (K + pack - 1) / pack;
  if (packed.shape != std::vector<int64_t>{N, words})
    tensor_error(packed, "shape " + dims(packed.shape[0], packed.shape[1]) + ", expected " + dims(N, words) + " for " +
                             t.shape->name + " " + dims(N, K) + " at " + std::to_string(bits) + " bits");
  const int64_t groups = c.per_tensor ? 1 : group_count(c, K, packed);
  const TensorView& scales = *t.scales;
  require_shape(scales, c.per_tensor ? std::vector<int64_t>{1} : std::vector<int64_t>{N, groups});
  const std::vector<float> stored_scale = scales_to_float(scales);

  IntWeight w;
  w.rows = N, w.cols = K, w.bits = bits, w.groups = groups, w.group_size = c.group_size == -1 ? K : c.group_size;
  w.scale.resize(static_cast<size_t>(groups * N));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < N; ++n) w.scale[g * N + n] = stored_scale[c.per_tensor ? 0 : n * groups + g];

  // Zero points [groups, N] in the unsigned form.
  const int32_t offset = 1 << (bits - 1);
  w.zero.assign(static_cast<size_t>(groups * N), offset);
  if (c.sym) {
    if (t.qzeros != nullptr) {  // older writers saved a symmetric scheme's zeros: int8 0s shaped as the scales
      const TensorView& z = *t.qzeros;
      require_dtype(z, DType::kI8);
      require_shape(z, scales.shape);
      for (size_t i = 0; i < z.nbytes; ++i)
        if (z.data[i] != std::byte{0})
          tensor_error(z, "entry " + std::to_string(i) + " is not 0 although the layer's scheme is symmetric (" +
                              c.origin + ")");
    }
  } else {
    if (t.qzeros == nullptr)
      tensor_error(packed, "its weight_zero_point tensor is missing although the layer's scheme is not symmetric (" +
                               c.origin + ")");
    const TensorView& z = *t.qzeros;
    if (c.per_tensor) {  // strategy tensor keeps its one zero unpacked, int8
      require_dtype(z, DType::kI8);
      require_shape(z, {1});
      const int32_t signed_zero = static_cast<int8_t>(z.data[0]);
      for (int32_t& zero : w.zero) zero = signed_zero + offset;
    } else {
      require_dtype(z, DType::kI32);
      require_shape(z, {(N + pack - 1) / pack, groups});
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t n = 0; n < N; ++n)
          w.zero[g * N + n] = field_of(int32_at(z, (n / pack) * groups + g), static_cast<int32_t>(n % pack), bits);
    }
  }

  // The group of each input: weight_g_idx under actorder "group", else contiguous.
  if (t.g_idx != nullptr) {
    const TensorView& gi = *t.g_idx;
    require_dtype(gi, DType::kI32);
    require_shape(gi, {K});
    std::vector<int32_t> group(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) {
      group[k] = int32_at(gi, k);
      if (group[k] < 0 || group[k] >= groups)
        tensor_error(gi, "entry " + std::to_string(k) + " is group " + std::to_string(group[k]) + " of " +
                             std::to_string(groups));
      if (!c.desc_act && group[k] != k / w.group_size)
        tensor_error(gi, "entry " + std::to_string(k) + " is not k / group_size although the layer's actorder is not "
                         "'group' (" + c.origin + ")");
    }
    if (c.desc_act) w.g_idx = std::move(group);
  } else if (c.desc_act) {
    tensor_error(packed, "its weight_g_idx tensor is missing although the layer's actorder is 'group' (" + c.origin +
                             ")");
  }

  w.q.resize(static_cast<size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      w.q[n * K + k] =
          static_cast<uint8_t>(field_of(int32_at(packed, n * words + k / pack), static_cast<int32_t>(k % pack), bits));
  return w;
}

}  // namespace zinfer::gpu::quant
