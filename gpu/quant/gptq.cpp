// GPTQ (dequantize.h): unpack qweight along K and qzeros along N, map each input row to its group
// (g_idx under act-order): W[n, k] = scale[g, n] · (q[k, n] − zero[g, n]) as an IntWeight.
#include <algorithm>
#include <cstring>
#if defined(__BMI2__)
#include <immintrin.h>
#endif
#include <string>

#include "gpu/quant/dequantize.h"
#include "gpu/quant/packed.h"

namespace zinfer::gpu::quant {
namespace {

// q[n, k] (row n of W, N rows of K) from qweight [K / pack, N], whose word (kw, n) packs inputs
// kw · pack .. + pack − 1 of output n: a transpose. Each block of 64 outputs reads its 256-byte
// run of every word row and writes its 64 rows of q front to back, so that both sides stream
// through the cache; the blocks are spread over the host's cores (a model has billions of values,
// and reading them one value at a time across rows took most of a GPTQ model's load).
template <int kBits>
void unpack_words(const std::byte* words, int64_t K, int64_t N, uint8_t* q) {
  constexpr int kPack = 32 / kBits;
  constexpr int64_t kBlock = 64;
  const int64_t rows = K / kPack;
#pragma omp parallel for schedule(static) if (N * K >= (int64_t{1} << 22))
  for (int64_t n0 = 0; n0 < N; n0 += kBlock) {
    const int64_t n1 = std::min(N, n0 + kBlock);
    for (int64_t kw = 0; kw < rows; ++kw) {
      const std::byte* row = words + (static_cast<size_t>(kw) * N) * 4;
      for (int64_t n = n0; n < n1; ++n) {
        uint32_t word;
        std::memcpy(&word, row + n * 4, 4);
        uint8_t* out = q + n * K + kw * kPack;
        if constexpr (kBits == 8) {
          std::memcpy(out, &word, 4);  // field j is byte j (little-endian)
        } else {
#if defined(__BMI2__)
          const uint64_t bytes = _pdep_u64(word, 0x0F0F0F0F0F0F0F0Full);  // nibble j into byte j
          std::memcpy(out, &bytes, 8);
#else
          for (int j = 0; j < kPack; ++j) out[j] = static_cast<uint8_t>((word >> (j * kBits)) & 0xFu);
#endif
        }
      }
    }
  }
}

void unpack_along_rows(const TensorView& qweight, int32_t bits, int64_t K, int64_t N, uint8_t* q) {
  switch (bits) {
    case 4: return unpack_words<4>(qweight.data, K, N, q);
    case 8: return unpack_words<8>(qweight.data, K, N, q);
    default: tensor_error(qweight, std::to_string(bits) + "-bit fields (quant_config takes 4 or 8 for GPTQ)");
  }
}

}  // namespace

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
  unpack_along_rows(qweight, bits, K, N, w.q.data());
  w.zero = std::move(zero);
  w.scale = std::move(scale);
  if (c.desc_act) w.g_idx = std::move(group);
  return w;
}

}  // namespace zinfer::gpu::quant
