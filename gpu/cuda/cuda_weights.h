// The model's weights on the device: matrices in bf16 (float32/float16 checkpoints are converted
// on load), norm weights and biases in float32. q/k/v and gate/up are fused into one matrix each
// so that a layer runs two GEMMs where the checkpoint has five. Everything lives in one allocation.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/model_config.h"

namespace zinfer::gpu::cuda {

struct LayerWeights {
  const float* input_norm = nullptr;      // [hidden]
  const __nv_bfloat16* qkv = nullptr;     // [(heads + 2 * kv_heads) * head_dim, hidden]: q rows, k rows, v rows
  const float* qkv_bias = nullptr;        // [(heads + 2 * kv_heads) * head_dim] or null
  const float* q_norm = nullptr;          // [head_dim] or null (Qwen3)
  const float* k_norm = nullptr;          // [head_dim] or null
  const __nv_bfloat16* o = nullptr;       // [hidden, heads * head_dim]
  const float* post_norm = nullptr;       // [hidden]
  const __nv_bfloat16* gate_up = nullptr; // [2 * intermediate, hidden]: gate rows, then up rows
  const __nv_bfloat16* down = nullptr;    // [hidden, intermediate]
};

struct ModelWeights {
  const __nv_bfloat16* embed = nullptr;   // [vocab, hidden]
  const __nv_bfloat16* lm_head = nullptr; // [vocab, hidden] (the embedding when tied)
  const float* final_norm = nullptr;      // [hidden]
  std::vector<LayerWeights> layers;
  DeviceBuffer storage;
  size_t bytes() const { return storage.bytes(); }
};

// Loads every tensor the config names from the safetensors files of model_dir; a missing tensor or
// a wrong shape throws (the message names the tensor).
ModelWeights load_weights(const std::string& model_dir, const ModelConfig& config);

// The same layout filled with seeded random values on the device (benchmarks at a real model's
// shapes without a checkpoint on disk): matrices ~ N(0, 0.02) in spread, norms near 1.
ModelWeights random_weights(const ModelConfig& config, uint64_t seed);

}  // namespace zinfer::gpu::cuda
