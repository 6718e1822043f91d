// Unpacking and dequantization at load: a quantized linear layer's tensors to the one integer
// form (int_weight.h) and back to the dense W [N, K]
// (out_features × in_features, torch's Linear layout) in float32. Each value is
// scale · (q − zero) with scale an fp16 number and q − zero a small integer, so the float32 product
// is exact: the dense weight is the one the format defines, bit for bit.
//   GPTQ (AutoGPTQ / GPTQModel):  qweight int32 [K/pack, N]: input row k in word k/pack, bits
//     (k%pack)·bits up; qzeros int32 [groups, N/pack]: column n in word n/pack at (n%pack)·bits,
//     holding zero − 1 ("gptq") or the zero ("gptq_v2"); scales [groups, N]; g_idx int32 [K]: the
//     group of input row k (act-order), else k / group_size.
//   AWQ GEMM (AutoAWQ):  qweight int32 [K, N/8]: columns 8j..8j+7 of row k in word j, column
//     8j+c at nibble (c%2)·4 + c/2 (AutoAWQ packs in the order 0 2 4 6 1 3 5 7); qzeros
//     [groups, N/8] packed the same way, holding the zero; scales [groups, N]; group k / group_size.
//   compressed-tensors pack-quantized (the library's PackedQuantizationCompressor, as vLLM loads
//     it):  weight_packed int32 [N, ceil(K/pack)]: input k of row n in word k/pack at bit
//     (k%pack)·bits, the signed value plus 2^(bits−1) (a partial last word is zero-padded);
//     weight_shape int64/int32 [2] the true [N, K]; weight_scale [N, groups] ([N, 1] channel, [1]
//     tensor); weight_zero_point (asymmetric only) int32 [ceil(N/pack), groups] packed along N the
//     same way, the signed zero plus 2^(bits−1) (strategy tensor: int8 [1], the signed zero);
//     weight_g_idx int32 [K] under actorder "group". W = scale · (q_signed − zero_signed), which is
//     the stored unsigned fields' difference: q and zero are read as IntWeight's unsigned form.
// A missing tensor, a dtype or shape that disagrees, a group size that does not divide K, or a
// g_idx outside the groups throws SafetensorsError naming the tensor and file (or the config field).
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/quant/int_weight.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {

struct QuantizedTensors {
  const TensorView* qweight = nullptr;
  const TensorView* qzeros = nullptr;
  const TensorView* scales = nullptr;
  const TensorView* g_idx = nullptr;  // GPTQ, compressed-tensors; may be absent unless desc_act
  const TensorView* shape = nullptr;  // compressed-tensors' weight_shape
};

struct DenseWeight {
  int64_t rows = 0;  // N
  int64_t cols = 0;  // K
  std::vector<float> values;
};

// Each format's tensors brought to the one integer form (int_weight.h).
IntWeight unpack_gptq(const QuantConfig& config, const QuantizedTensors& t);
IntWeight unpack_awq(const QuantConfig& config, const QuantizedTensors& t);
// `config` is one layer's (layer_config()): its group's bits, group size, symmetry, act-order.
IntWeight unpack_compressed_tensors(const QuantConfig& config, const QuantizedTensors& t);
// Dispatches on config.method.
IntWeight unpack(const QuantConfig& config, const QuantizedTensors& t);
// unpack(), then IntWeight::to_dense().
DenseWeight dequantize(const QuantConfig& config, const QuantizedTensors& t);

}  // namespace zinfer::gpu::quant
