// Helpers shared by the GPTQ and AWQ unpackers and the FP8 readers: checked access to the packed
// int32 tensors, the scales and zero points, with errors naming the tensor and its file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {

[[noreturn]] void tensor_error(const TensorView& t, const std::string& what);
// The tensor, which must be present (the loader names `name` when it is not), 2-D.
const TensorView& require_2d(const TensorView* t, const char* role);
void require_dtype(const TensorView& t, DType dtype);
void require_shape(const TensorView& t, const std::vector<int64_t>& shape);
// The i-th int32 element (little-endian, unaligned-safe).
int32_t int32_at(const TensorView& t, int64_t i);
// The `bits`-wide field `index` of a packed word.
inline int32_t field_of(int32_t word, int32_t index, int32_t bits) {
  return static_cast<int32_t>((static_cast<uint32_t>(word) >> (index * bits)) & ((1u << bits) - 1u));
}
// Whether every entry of a zero-point tensor is 0 (+0 or -0 of an e4m3 or float dtype, 0 of an
// integer one); another dtype throws naming the tensor.
bool all_zero(const TensorView& zero_point);
// Scales as float32: fp16 as the formats store them (bf16 and float32 are widened exactly too).
std::vector<float> scales_to_float(const TensorView& t);
// Groups over K inputs: 1 for group_size -1; a group size that does not divide K throws, naming
// the field, the config file and the tensor.
int64_t group_count(const QuantConfig& c, int64_t K, const TensorView& qweight);

}  // namespace zinfer::gpu::quant
