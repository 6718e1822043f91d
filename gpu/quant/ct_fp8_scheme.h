// compressed-tensors FP8 W8A8 schemes: a config group stored "float-quantized" (or
// "naive-quantized", the same storage: both are the library's NaiveQuantizationCompressor, the
// weight cast to the QuantizationArgs' torch dtype, float8_e4m3fn for 8-bit floats) read from its
// `weights` and `input_activations` QuantizationArgs into a CtGroup (quant_config.h) that the FP8
// path (fp8.h) computes exactly:
//   weights            num_bits 8, type float, symmetric, static; strategy tensor, channel, or
//                      block with block_structure [bn, bk] ("bnxbk" in older writers)
//   input_activations  num_bits 8, type float, symmetric; strategy token and dynamic (per-token
//                      scales), tensor and static (the checkpoint's input_scale), or group with
//                      group_size bk and dynamic beside block weights (per token and block of inputs,
//                      the library's FP8_BLOCK)
// Anything else is a ModelConfigError naming the field: FP8 weight-only (no input_activations; the
// FP8 layers always quantize their inputs), dynamic per-tensor activation scales (one amax over the
// whole batch, which no layer here computes), asymmetric scales, int weights under a float format.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpu/quant/quant_config.h"

namespace zinfer::gpu::quant {

// `path` names the group in errors ("config_groups.group_0"); `inputs` is null when the group has
// no input_activations.
void read_ct_fp8_scheme(const nlohmann::json& weights, const nlohmann::json* inputs, CtGroup& g,
                        const std::string& path, const std::string& origin);

// The library's FP8 preset schemes by (upper-case) name, as {"weights": ..., "input_activations":
// ...}: FP8 (per-tensor weights, static per-tensor inputs), FP8_DYNAMIC (per-channel weights,
// dynamic per-token inputs), FP8_BLOCK (128 x 128 blocks, dynamic per token and 128 inputs).
std::optional<nlohmann::json> ct_fp8_preset(const std::string& name);

}  // namespace zinfer::gpu::quant
