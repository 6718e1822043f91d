// The settings of gpu::BackendOptions that a config file sets: [model] path, device, dtype, quantization,
// max_model_len, tuning_cache, tensor_parallel_size and [cache] block_size, gpu_memory_utilization, num_gpu_blocks, num_cpu_blocks,
// swap_space_mb, cpu_kv_cache_mb, kv_cache_dtype (settings/setting.h). A header of its own so that the CUDA sources,
// which include gpu/backend.h, do not compile the descriptions.
#pragma once

#include "gpu/backend.h"
#include "settings/setting.h"

namespace zinfer::gpu {

inline const settings::Settings<BackendOptions>& backend_settings() {
  using O = BackendOptions;
  static const settings::Settings<O> s = {
      settings::text<O>("model", "path", &O::model_dir, {},
                        "a Hugging Face model folder (config.json, *.safetensors, tokenizer.json)"),
      settings::text<O>("model", "device", &O::device, {"cpu", "cuda", "synthetic"},
                        "where the model runs (synthetic: no weights, for control-plane benchmarks)"),
      settings::text<O>("model", "dtype", &O::dtype, {"auto", "float32", "bfloat16", "float16"},
                        "compute type (the cpu backend always computes in float32)"),
      settings::integer<O>("model", "max_model_len", &O::max_model_len, 0, int64_t(1) << 24,
                           "context length; 0 = the model's max_position_embeddings"),
      settings::text<O>("model", "quantization", &O::quantization, {"auto", "fp8", "none"},
                        "auto: as config.json's quantization_config says; fp8: online FP8 W8A8 of a dense "
                        "checkpoint (an fp8 one as it is); none: refuse a quantized checkpoint"),
      settings::text<O>("model", "tuning_cache", &O::tuning_cache, {},
                        "cuda: where the start-up cuBLASLt tuning is kept between runs: auto "
                        "($XDG_CACHE_HOME/zinfer, else ~/.cache/zinfer), a folder, or off"),
      settings::integer<O>("model", "tensor_parallel_size", &O::tensor_parallel_size, 1, 64,
                           "ranks the model is split over (cpu: threads; cuda: GPUs 0..N-1, NCCL)"),
      settings::integer<O>("cache", "block_size", &O::block_size, 1, 256, "tokens per KV block"),
      settings::number<O>("cache", "gpu_memory_utilization", &O::gpu_memory_utilization, 0.05, 0.99,
                          "cuda: fraction of GPU memory for weights + workspace + KV cache"),
      settings::integer<O>("cache", "num_gpu_blocks", &O::num_gpu_blocks, 0, int64_t(1) << 24,
                           "device KV blocks; 0 = from memory (cuda) or cpu_kv_cache_mb (cpu)"),
      settings::integer<O>("cache", "num_cpu_blocks", &O::num_cpu_blocks, 0, int64_t(1) << 24,
                           "host (swap) KV blocks; 0 = from swap_space_mb"),
      settings::integer<O>("cache", "swap_space_mb", &O::swap_space_bytes, 0, int64_t(1) << 22,
                           "host memory (MiB) for swapped-out KV blocks", int64_t(1) << 20),
      settings::integer<O>("cache", "cpu_kv_cache_mb", &O::cpu_kv_cache_bytes, 1, int64_t(1) << 22,
                           "cpu backend: memory (MiB) of the KV cache when num_gpu_blocks = 0", int64_t(1) << 20),
      // vLLM's names; its fp8_e5m2 (and anything else) is refused by name: only e4m3fn is stored.
      settings::enumerated<O>("cache", "kv_cache_dtype", &O::kv_cache_dtype,
                              std::vector<std::pair<std::string, KvCacheDtype>>{{"auto", KvCacheDtype::kAuto},
                                                                                {"fp8", KvCacheDtype::kFp8},
                                                                                {"fp8_e4m3", KvCacheDtype::kFp8}},
                              "auto: K/V in the compute type; fp8 (= fp8_e4m3): e4m3fn with per-layer k/v scales "
                              "from the checkpoint (else 1.0), twice the tokens of bf16 in the same memory"),
  };
  return s;
}

}  // namespace zinfer::gpu
