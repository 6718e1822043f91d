// The per-layer scales of an FP8 KV cache ([cache] kv_cache_dtype = "fp8"), read from the checkpoint
// as vLLM reads them (its BaseKVCacheMethod): per attention layer l, under
// "model.layers.<l>.self_attn.",
//   k_scale and v_scale   one number each: K's and V's scale;
//   kv_scale              the older single number: K's and V's scale alike;
//   none                  1.0 for both (one log line says how many layers have none).
// A scale is the dequantization factor: the cache stores e4m3(x / scale) and attention reads
// code · scale. A scale that is not one finite positive float (F32, BF16 or F16; shape [] or [1]),
// k_scale without v_scale (or v_scale without k_scale), or kv_scale beside k_scale/v_scale, is an
// error naming the tensor. compressed-tensors' k_proj.output_scale / v_proj.output_scale come with
// a kv_cache_scheme, which quant_config.cpp refuses, so they are not read here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace zinfer::gpu::quant
