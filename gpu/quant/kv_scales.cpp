#include "gpu/quant/kv_scales.h"

#include <cmath>
#include <cstdio>

namespace zinfer::gpu::quant {
namespace {

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

}  // namespace

KvScales read_kv_scales(const WeightSet& checkpoint, int32_t num_layers, const std::string& model_dir, bool log) {
  KvScales s;
  s.k.assign(static_cast<size_t>(num_layers), 1.0f);
  s.v.assign(static_cast<size_t>(num_layers), 1.0f);
  for (int32_t l = 0; l < num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
    const bool k = checkpoint.has(p + "k_scale"), v = checkpoint.has(p + "v_scale"), kv = checkpoint.has(p + "kv_scale");
    if (kv && (k || v))
      throw SafetensorsError("tensor " + p + "kv_scale in " + model_dir + " beside " + p + (k ? "k_scale" : "v_scale") +
                             ": a layer's KV cache scales are either kv_scale or k_scale and v_scale");
    if (k != v)
      throw SafetensorsError("tensor " + p + (k ? "v_scale" : "k_scale") + " missing in " + model_dir + " while " + p +
                             (k ? "k_scale" : "v_scale") + " is there: the FP8 KV cache needs both");
    if (kv) {
      s.k[l] = s.v[l] = scalar_scale(checkpoint.get(p + "kv_scale"));
    } else if (k) {
      s.k[l] = scalar_scale(checkpoint.get(p + "k_scale"));
      s.v[l] = scalar_scale(checkpoint.get(p + "v_scale"));
    } else {
      ++s.missing;
    }
  }
  if (log && s.missing > 0)
    std::fprintf(stderr,
                 "zinfer: kv_cache_dtype fp8: %d of %d layers of %s have no k/v scale (self_attn.k_scale, v_scale or "
                 "kv_scale); they use 1.0\n",
                 s.missing, num_layers, model_dir.c_str());
  return s;
}

}  // namespace zinfer::gpu::quant
