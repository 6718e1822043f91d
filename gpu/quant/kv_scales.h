// The per-layer scales of an FP8 KV cache ([cache] kv_cache_dtype = "fp8"), read from the checkpoint
// as vLLM reads them (its BaseKVCacheMethod, and the compressed-tensors and fp8 configs'
// get_cache_scale): per attention layer l, under "model.layers.<l>.self_attn.", one of
//   k_scale and v_scale        one number each: K's and V's scale (AutoFP8; compressed-tensors'
//                              kv_cache_scheme since August 2024);
//   kv_scale                   the older single number: K's and V's scale alike;
//   k_proj.output_scale and    compressed-tensors' kv_cache_scheme before it moved the scales to
//   v_proj.output_scale        self_attn (August 2024): the output quantization of k_proj and v_proj,
//                              which vLLM maps to k_scale and v_scale; an all-zero
//                              k_proj/v_proj.output_zero_point beside one is accepted (the scheme
//                              is symmetric), a non-zero one or one without its scale is an error;
//   none                       1.0 for both (one log line says how many layers have none).
// A scale is the dequantization factor: the cache stores e4m3(x / scale) and attention reads
// code · scale. A scale that is not one finite positive float (F32, BF16 or F16; shape [] or [1]),
// one of a pair without the other, or two of the namings in one layer, is an error naming the
// tensor. These tensors are no weights: no linear layer reads an output_scale (the checkpoint
// reader's finish() checks weight and input scales only), so k_proj and v_proj load as they are.
//
// Under kv_cache_dtype auto the cache holds the compute type and no scale is read, as in vLLM
// (whose auto keeps the model dtype for these checkpoints and sets the scales to 1.0); when the
// checkpoint's quantization_config has a kv_cache_scheme (kv_cache_scheme.h), unused_kv_scales()
// is the log line that says its scales go unused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {

struct KvScales {
  std::vector<float> k;  // [num_layers]
  std::vector<float> v;  // [num_layers]
  int32_t missing = 0;   // layers that had no scale in the checkpoint (1.0)
};

// Throws SafetensorsError naming a malformed or unpaired scale tensor. `log` prints the one line
// about layers without scales to stderr (rank 0 of a group only, so that it appears once).
KvScales read_kv_scales(const WeightSet& checkpoint, int32_t num_layers, const std::string& model_dir, bool log);

// kv_cache_dtype auto: "" when `config` has no kv_cache_scheme, else the line (no newline) saying
// that the KV cache holds `cache_type` and the checkpoint's k/v scales are unused.
std::string unused_kv_scales(const QuantConfig& config, const std::string& cache_type, const std::string& model_dir);

}  // namespace zinfer::gpu::quant
