// Theoretical limits of serving a model on a GPU (the "roofline" of the inference literature):
//   weight bytes      every parameter (ParamCounts) in the chosen format, conventions below
//   decode_ms_b1      weight bytes / memory bandwidth: one decode step at batch 1 reads every weight
//   prefill_ms/token  2 * params FLOPs / tensor rate (bf16 rate for bf16 and int4 — W4A16 computes in
//                     bf16 — and the 8-bit rate for int8/fp8, W8A8)
//   kv bytes/token    2 (K and V) * layers * kv_heads * head_dim * 2 bytes (bf16 cache)
//   max_kv_tokens     (GPU memory - weight bytes) / kv bytes per token, floored, 0 when it does not fit
//   users[ctx]        max_kv_tokens / ctx, floored, for ctx = 1024, 8192, 32768
// Under tensor parallelism over N GPUs (--tensor-parallel-size) every figure is one GPU's: weight
// bytes / N (the norms, a few thousandths of a percent, are counted split too), KV bytes per token
// with the GPU's KV heads (kv_heads / N, at least one: GQA heads are replicated), prefill FLOPs / N.
// Weight formats (the block linears are quantized; embedding, lm_head, norms, biases stay bf16):
//   bf16  2 bytes per parameter
//   int8  1 byte per block-linear weight + one bf16 scale per output channel (fp8 the same)
//   int4  half a byte per block-linear weight + per output channel and group of 128 input channels
//         one bf16 scale and one 4-bit zero point (2.5 bytes), as GPTQ/AWQ checkpoints store them
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/bench/lib/gpu_table.h"
#include "tools/bench/lib/model_shape.h"

namespace zinfer::bench {

enum class WeightFormat { kBf16 = 0, kInt8 = 1, kInt4 = 2 };
inline constexpr std::array<WeightFormat, 3> kWeightFormats = {WeightFormat::kBf16, WeightFormat::kInt8,
                                                               WeightFormat::kInt4};
inline constexpr std::array<int64_t, 3> kUserContexts = {1024, 8192, 32768};
inline constexpr int64_t kInt4GroupSize = 128;
const char* to_string(WeightFormat f);

int64_t weight_bytes(const ModelShape& m, WeightFormat f);
int64_t kv_bytes_per_token(const ModelShape& m);  // bf16 cache

struct Roofline {
  ModelShape model;
  GpuSpec gpu;
  int64_t tensor_parallel_size = 1;
  int64_t params = 0;
  std::array<int64_t, 3> weight_bytes{};         // by WeightFormat
  std::array<double, 3> decode_ms_b1{};
  std::array<double, 3> prefill_ms_per_token{};
  int64_t kv_bytes_per_token = 0;
  std::array<int64_t, 3> max_kv_tokens{};
  std::array<std::array<int64_t, 3>, 3> users{};  // [context index][format]
};

Roofline compute_roofline(const ModelShape& m, const GpuSpec& gpu, int64_t tensor_parallel_size = 1);
nlohmann::json roofline_json(const Roofline& r);
std::string roofline_text(const Roofline& r);

}  // namespace zinfer::bench
