// AWQ GEMM (dequantize.h): unpack qweight and qzeros along N in AutoAWQ's interleaved nibble
// order: W[n, k] = scale[k / group_size, n] · (q[k, n] − zero[k / group_size, n]) as an IntWeight.
#include <algorithm>
#include <string>

#include "gpu/quant/dequantize.h"
#include "gpu/quant/packed.h"

namespace zinfer::gpu::quant {
namespace {
// Column c of an 8-column word sits at this nibble: AutoAWQ packs columns 0 2 4 6 1 3 5 7.
constexpr int32_t kNibbleOf[8] = {0, 4, 1, 5, 2, 6, 3, 7};
}  // namespace

IntWeight unpack_awq(const QuantConfig& c, const QuantizedTensors& t) {
  const TensorView& qweight = require_2d(t.qweight, "qweight");
  const TensorView& qzeros = require_2d(t.qzeros, "qzeros");
  const TensorView& scales = require_2d(t.scales, "scales");
  require_dtype(qweight, DType::kI32);
  require_dtype(qzeros, DType::kI32);
  if (t.g_idx != nullptr) tensor_error(*t.g_idx, "AWQ checkpoints have no g_idx (act-order is GPTQ's)");
  const int64_t K = qweight.shape[0], words = qweight.shape[1], N = words * 8;
  const int64_t groups = group_count(c, K, qweight);
  const int64_t group_size = c.group_size == -1 ? K : c.group_size;
  require_shape(qzeros, {groups, words});
  require_shape(scales, {groups, N});
  std::vector<float> scale = scales_to_float(scales);

  IntWeight w;
  w.rows = N, w.cols = K, w.bits = 4, w.groups = groups, w.group_size = group_size;
  w.q.resize(static_cast<size_t>(N * K));
  w.zero.resize(static_cast<size_t>(groups * N));
  // q[n, k] is a transpose of qweight [K, N / 8]: each block of 8 words (64 outputs) walks all
  // rows k and writes its 64 rows of q front to back, the blocks spread over the host's cores
  // (one value at a time across rows took most of a model's load).
  constexpr int64_t kBlockWords = 8;
#pragma omp parallel for schedule(static) if (N * K >= (int64_t{1} << 22))
  for (int64_t j0 = 0; j0 < words; j0 += kBlockWords) {
    const int64_t j1 = std::min(words, j0 + kBlockWords);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = j0; j < j1; ++j) {
        const int32_t qword = int32_at(qweight, k * words + j);
        for (int32_t col = 0; col < 8; ++col)
          w.q[(j * 8 + col) * K + k] = static_cast<uint8_t>(field_of(qword, kNibbleOf[col], 4));
      }
  }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < words; ++j) {
      const int32_t zword = int32_at(qzeros, g * words + j);
      for (int32_t col = 0; col < 8; ++col) w.zero[g * N + j * 8 + col] = field_of(zword, kNibbleOf[col], 4);
    }
  w.scale = std::move(scale);
  return w;
}

IntWeight unpack(const QuantConfig& c, const QuantizedTensors& t) {
  switch (c.method) {
    case Method::kGptq: return unpack_gptq(c, t);
    case Method::kAwq: return unpack_awq(c, t);
    case Method::kCompressedTensors: return unpack_compressed_tensors(c, t);
    case Method::kFp8:
      throw SafetensorsError("tensor " + t.qweight->name + " in " + t.qweight->file +
                             ": an integer-quantized layer in a checkpoint whose quant_method is fp8");
    case Method::kNone: break;
  }
  throw SafetensorsError("a quantized layer read for a checkpoint that is not quantized");
}

DenseWeight dequantize(const QuantConfig& c, const QuantizedTensors& t) {
  const IntWeight w = unpack(c, t);
  return DenseWeight{w.rows, w.cols, w.to_dense()};
}

}  // namespace zinfer::gpu::quant
