// Small random checkpoints with FP8 KV cache scales written into them, for the KV scale and FP8
// KV cache tests (kv_scales_test.cpp, kv_fp8_test.cpp, kv_cache_scheme_model_test.cpp).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "gpu/random_model.h"
#include "gpu/safetensors.h"
#include "tests/model/checkpoint_folder.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu::test {

inline ModelConfig tiny(Architecture arch) {
  ModelConfig c = tiny_config(arch);
  if (arch == Architecture::kMistral) c.sliding_window = 20;
  return c;
}

inline void write_model(const ScratchDir& dir, const ModelConfig& c, uint64_t seed) {
  RandomModelOptions o;
  o.seed = seed;
  o.stddev = 0.15f;
  o.norm_stddev = 0.2f;
  o.bias_stddev = 0.3f;
  write_random_model(dir.str(), c, o);
}

inline Entry f32_scalar(float x, std::vector<int64_t> shape = {}) {
  Entry e{DType::kF32, std::move(shape), std::vector<std::byte>(sizeof(float))};
  std::memcpy(e.bytes.data(), &x, sizeof x);
  return e;
}

inline Entry bf16_scalar(float x, std::vector<int64_t> shape = {}) {
  const uint16_t b = float_to_bf16(x);
  Entry e{DType::kBF16, std::move(shape), std::vector<std::byte>(2)};
  std::memcpy(e.bytes.data(), &b, 2);
  return e;
}

inline std::string attn(int layer, const char* role) {
  return "model.layers." + std::to_string(layer) + ".self_attn." + role;
}

// Layer 0 with k_scale and v_scale, layer 1 with the older kv_scale (bf16): the two forms vLLM reads.
inline void add_scales(const ScratchDir& dir, float k0, float v0, float kv1) {
  Folder f(dir.path());
  f.tensors[attn(0, "k_scale")] = f32_scalar(k0);
  f.tensors[attn(0, "v_scale")] = f32_scalar(v0, {1});
  f.tensors[attn(1, "kv_scale")] = bf16_scalar(kv1);
  f.write(dir.path());
}

}  // namespace zinfer::gpu::test
