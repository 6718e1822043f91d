// A compressed-tensors float-quantized linear layer (a config group with an FP8 scheme,
// ct_fp8_scheme.h) read into the one FP8 form (fp8.h), as the library's NaiveQuantizationCompressor
// stores it and dequantizes it (W = weight · weight_scale, the scale broadcast over its strategy's
// shape):
//   <prefix>.weight              float8_e4m3fn [N, K] (safetensors "F8_E4M3")
//   <prefix>.weight_scale        strategy tensor: [] or [1]; channel: [N, 1] (or [N]);
//                                block [bn, bk]: [ceil(N / bn), ceil(K / bk)]
//   <prefix>.input_scale         static input_activations only: [] or [1]
//   <prefix>.weight_zero_point,  written by older library versions for symmetric schemes too:
//   <prefix>.input_zero_point    accepted when every entry is zero (the scheme is symmetric)
// Scales in float32, bfloat16 or float16 (widened exactly). A missing or misshapen tensor, a dtype
// that disagrees, a non-finite or negative scale, a zero static input scale, a non-zero zero point,
// an input_scale beside dynamic activations or a weight_scale_inv (the fp8 format's name) is a
// SafetensorsError naming the tensor and its file.
#pragma once

#include <string>
#include <vector>

#include "gpu/quant/fp8.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {

// `prefix` ends with the dot; `shape` is [N, K]; `group` is the layer's config group (fp8 true);
// `origin` names the config file in errors.
Fp8Weight read_ct_fp8_layer(const WeightSet& checkpoint, const CtGroup& group, const std::string& prefix,
                            const std::vector<int64_t>& shape, const std::string& origin);

// The zero-point tensors such a layer may have (finish() checks each belongs to a layer read).
inline const char* const kCtFp8ZeroRoles[] = {"weight_zero_point", "input_zero_point"};

}  // namespace zinfer::gpu::quant
