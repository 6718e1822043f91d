// An "fp8" checkpoint's linear layer read into the one FP8 form (fp8.h), as vLLM's Fp8Config and
// the formats' writers (AutoFP8 / llm-compressor's "fp8", DeepSeek-V3, Qwen3-FP8) store it:
//   <prefix>.weight            float8_e4m3fn [N, K] (safetensors "F8_E4M3"; "F8_E5M2" is refused)
//   per-tensor / per-channel   <prefix>.weight_scale  [] or [1] (the layer), [N] or [N, 1] (a row)
//   block-wise                 <prefix>.weight_scale_inv [ceil(N/bn), ceil(K/bk)] with
//                              weight_block_size [bn, bk]: W = w_q · scale_inv of the row's and
//                              column's block (the name says it is the inverse of the quantizer's
//                              scale, i.e. the dequantization factor)
//   static activations         <prefix>.input_scale [] or [1]
// Scales in float32, bfloat16 or float16 (widened exactly). A missing or misshapen tensor, a dtype
// that disagrees, a non-finite or negative scale, a scale the config does not call for (weight_scale
// beside weight_block_size, input_scale under the dynamic scheme) is a SafetensorsError naming the
// tensor and its file.
#pragma once

#include <string>
#include <vector>

#include "gpu/quant/fp8.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {

// `prefix` ends with the dot ("model.layers.0.self_attn.q_proj."); `shape` is [N, K].
Fp8Weight read_fp8_layer(const WeightSet& checkpoint, const QuantConfig& config, const std::string& prefix,
                         const std::vector<int64_t>& shape);

// A layer's float8_e4m3fn weight tensor `w` of `shape` [N, K] as an Fp8Weight's codes (its scales
// and activation scheme are the caller's). float8_e5m2 (`e5m2_why` says why not), another dtype
// (not the e4m3 of `layer`) or another shape is a SafetensorsError naming the tensor.
Fp8Weight e4m3_weight(const TensorView& w, const std::vector<int64_t>& shape, const std::string& e5m2_why,
                      const std::string& layer);

// A per-tensor scale's shape: [] or [1].
bool per_tensor_shape(const std::vector<int64_t>& shape);

// A scale tensor's values in float32 (F32, BF16 or F16 widened exactly), each finite and not
// negative; a SafetensorsError naming the tensor and its file otherwise.
std::vector<float> fp8_scale_values(const TensorView& t);

// The scale tensors an fp8 layer may have beside its weight (finish() checks each was read).
inline const char* const kFp8ScaleRoles[] = {"weight_scale", "weight_scale_inv", "input_scale"};

}  // namespace zinfer::gpu::quant
