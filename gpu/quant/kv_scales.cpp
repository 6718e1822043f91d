#include "gpu/quant/kv_scales.h"

#include <cmath>
#include <cstdio>

#include "gpu/quant/packed.h"

namespace zinfer::gpu::quant {
namespace {

// The two-tensor namings of a layer's K and V scales, under "model.layers.<l>.self_attn.".
struct Pair {
  const char* k;
  const char* v;
};
constexpr Pair kSelfAttn{"k_scale", "v_scale"};
constexpr Pair kOutput{"k_proj.output_scale", "v_proj.output_scale"};  // compressed-tensors before August 2024
constexpr Pair kOutputZero{"k_proj.output_zero_point", "v_proj.output_zero_point"};
constexpr const char* kSingle = "kv_scale";
constexpr const char* kNamings = "k_scale and v_scale, kv_scale, or k_proj.output_scale and v_proj.output_scale";

float scalar_scale(const TensorView& t) {
  const bool scalar = t.shape.empty() || (t.shape.size() == 1 && t.shape[0] == 1);
  const bool floating = t.dtype == DType::kF32 || t.dtype == DType::kBF16 || t.dtype == DType::kF16;
  if (!scalar || !floating)
    throw SafetensorsError("tensor " + t.name + " in " + t.file +
                           ": a KV cache scale must be one float (F32, BF16 or F16; shape [] or [1]); only per-tensor "
                           "k/v scales are supported");
  float x = 0;
  to_float32(t, &x);
  if (!(std::isfinite(x) && x > 0.0f))
    throw SafetensorsError("tensor " + t.name + " in " + t.file + ": KV cache scale " + std::to_string(x) +
                           " is not a finite positive number");
  return x;
}

// Both tensors of a pair or neither; true when both are there.
bool paired(const WeightSet& w, const std::string& p, const Pair& pair, const std::string& model_dir) {
  const bool k = w.has(p + pair.k), v = w.has(p + pair.v);
  if (k != v)
    throw SafetensorsError("tensor " + p + (k ? pair.v : pair.k) + " missing in " + model_dir + " while " + p +
                           (k ? pair.k : pair.v) + " is there: the FP8 KV cache needs both");
  return k;
}

// compressed-tensors' output quantization of k_proj / v_proj may keep a zero point beside its
// scale; the kv_cache_scheme is symmetric, so it must be zero.
void check_zero_point(const WeightSet& w, const std::string& zero, const std::string& scale) {
  if (!w.has(zero)) return;
  const TensorView& z = w.get(zero);
  if (!w.has(scale)) tensor_error(z, "a zero point of the KV cache scale " + scale + ", which the checkpoint does not have");
  if (!all_zero(z)) tensor_error(z, "is not zero, but an FP8 KV cache's scales are symmetric (no zero point)");
}

}  // namespace

KvScales read_kv_scales(const WeightSet& checkpoint, int32_t num_layers, const std::string& model_dir, bool log) {
  KvScales s;
  s.k.assign(static_cast<size_t>(num_layers), 1.0f);
  s.v.assign(static_cast<size_t>(num_layers), 1.0f);
  for (int32_t l = 0; l < num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
    // The first tensor of each naming the layer has, in the order kNamings lists them.
    std::vector<std::string> found;
    for (const char* name : {kSelfAttn.k, kSelfAttn.v}) {
      if (checkpoint.has(p + name)) {
        found.push_back(p + name);
        break;
      }
    }
    if (checkpoint.has(p + kSingle)) found.push_back(p + kSingle);
    for (const char* name : {kOutput.k, kOutput.v}) {
      if (checkpoint.has(p + name)) {
        found.push_back(p + name);
        break;
      }
    }
    if (found.size() > 1)
      throw SafetensorsError("tensor " + found[1] + " in " + model_dir + " beside " + found[0] +
                             ": a layer's KV cache scales are " + kNamings + ", one of them");
    const bool self_attn = paired(checkpoint, p, kSelfAttn, model_dir);
    const bool output = paired(checkpoint, p, kOutput, model_dir);
    check_zero_point(checkpoint, p + kOutputZero.k, p + kOutput.k);
    check_zero_point(checkpoint, p + kOutputZero.v, p + kOutput.v);
    if (checkpoint.has(p + kSingle)) {
      s.k[l] = s.v[l] = scalar_scale(checkpoint.get(p + kSingle));
    } else if (self_attn || output) {
      const Pair& pair = self_attn ? kSelfAttn : kOutput;
      s.k[l] = scalar_scale(checkpoint.get(p + pair.k));
      s.v[l] = scalar_scale(checkpoint.get(p + pair.v));
    } else {
      ++s.missing;
    }
  }
  if (log && s.missing > 0)
    std::fprintf(stderr,
                 "zinfer: kv_cache_dtype fp8: %d of %d layers of %s have no k/v scale (self_attn.k_scale and v_scale, "
                 "kv_scale, or k_proj/v_proj.output_scale); they use 1.0\n",
                 s.missing, num_layers, model_dir.c_str());
  return s;
}

std::string unused_kv_scales(const QuantConfig& config, const std::string& cache_type, const std::string& model_dir) {
  if (!config.kv_cache_scheme) return "";
  return "zinfer: kv_cache_dtype auto: the KV cache holds " + cache_type + "; the FP8 k/v scales that " +
         model_dir + "'s quantization_config.kv_cache_scheme calibrated are unused (kv_cache_dtype fp8 uses them, " +
         "as vLLM's --kv-cache-dtype fp8)";
}

}  // namespace zinfer::gpu::quant
