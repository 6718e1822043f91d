// A checkpoint's `kv_cache_scheme`: the quantized KV cache its writer calibrated, with one k and
// one v scale per attention layer stored beside the weights (read by kv_scales.h).
//   compressed-tensors (llm-compressor)  a QuantizationArgs object, as the library defines it:
//                                        num_bits 8, type float, strategy tensor, dynamic false,
//                                        symmetric true: an FP8 e4m3 cache with static per-tensor
//                                        scales (vLLM's CompressedTensorsKVCacheMethod)
//   fp8 (AutoFP8)                        the string "static" (the same scales), or the object above
// A field left out takes the library's default (num_bits 8, type int, symmetric true, dynamic
// false; the strategy inferred from group_size: none means tensor). Every other value of every
// field is a ModelConfigError naming it: int8 (type int) or other widths, asymmetric scales (a
// zero point), per-head (attn_head) or other strategies, dynamic scales, group_size,
// block_structure, actorder, an unknown key.
//
// What it changes: nothing in the weights. The KV cache stays what [cache] kv_cache_dtype says,
// as in vLLM, whose "auto" keeps the model's dtype for a compressed-tensors or fp8 checkpoint and
// forces the scales to 1.0: kv_cache_dtype fp8 reads the checkpoint's scales, auto keeps the
// compute type and leaves them unused, and the log says so (kv_scales.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace zinfer::gpu::quant {

// `scheme` is quantization_config.kv_cache_scheme (not null); `fp8_config` says whether it came
// from a quant_method "fp8" config, where AutoFP8's "static" is read too. Throws ModelConfigError
// naming origin and the field.
void read_kv_cache_scheme(const nlohmann::json& scheme, bool fp8_config, const std::string& origin);

}  // namespace zinfer::gpu::quant
