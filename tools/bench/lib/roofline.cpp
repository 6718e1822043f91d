#include "tools/bench/lib/roofline.h"

#include <algorithm>
#include <stdexcept>

#include <cstdio>

namespace zinfer::bench {

const char* to_string(WeightFormat f) {
  switch (f) {
    case WeightFormat::kBf16: return "bf16";
    case WeightFormat::kInt8: return "int8";
    case WeightFormat::kInt4: return "int4";
  }
  return "?";
}

int64_t weight_bytes(const ModelShape& m, WeightFormat f) {
  const ParamCounts c = count_params(m);
  const int64_t kept_bf16 = 2 * (c.total() - c.block_linear);
  switch (f) {
    case WeightFormat::kBf16: return 2 * c.total();
    case WeightFormat::kInt8: {
      int64_t per_layer = 0;
      for (const auto& l : block_linears(m)) per_layer += l.out * l.in + 2 * l.out;
      return kept_bf16 + m.layers * per_layer;
    }
    case WeightFormat::kInt4: {
      // Counted in half-bytes so that the 4-bit parts stay exact.
      int64_t nibbles = 0;
      for (const auto& l : block_linears(m)) {
        const int64_t groups = (l.in + kInt4GroupSize - 1) / kInt4GroupSize;
        nibbles += l.out * l.in + l.out * groups * 5;  // weights + (bf16 scale + 4-bit zero) per group
      }
      return kept_bf16 + (m.layers * nibbles + 1) / 2;
    }
  }
  return 0;
}

int64_t kv_bytes_per_token(const ModelShape& m) { return 2 * m.layers * m.kv_heads * m.head_dim * 2; }

Roofline compute_roofline(const ModelShape& m, const GpuSpec& gpu, int64_t tp) {
  if (tp < 1) throw std::invalid_argument("tensor_parallel_size must be at least 1");
  Roofline r;
  r.model = m;
  r.gpu = gpu;
  r.tensor_parallel_size = tp;
  r.params = count_params(m).total();
  ModelShape per_gpu = m;
  per_gpu.kv_heads = std::max<int64_t>(1, m.kv_heads / tp);
  r.kv_bytes_per_token = kv_bytes_per_token(per_gpu);
  const double mem_bytes = gpu.mem_gib * 1024.0 * 1024.0 * 1024.0;
  for (WeightFormat f : kWeightFormats) {
    const auto i = static_cast<size_t>(f);
    r.weight_bytes[i] = weight_bytes(m, f) / tp;
    r.decode_ms_b1[i] = static_cast<double>(r.weight_bytes[i]) / (gpu.mem_bw_gbs * 1e9) * 1e3;
    const double tflops = f == WeightFormat::kInt8 ? gpu.int8_tflops : gpu.bf16_tflops;
    r.prefill_ms_per_token[i] = 2.0 * static_cast<double>(r.params) / static_cast<double>(tp) / (tflops * 1e12) * 1e3;
    const double free_bytes = mem_bytes - static_cast<double>(r.weight_bytes[i]);
    r.max_kv_tokens[i] = free_bytes > 0 ? static_cast<int64_t>(free_bytes / static_cast<double>(r.kv_bytes_per_token)) : 0;
    for (size_t c = 0; c < kUserContexts.size(); ++c) r.users[c][i] = r.max_kv_tokens[i] / kUserContexts[c];
  }
  return r;
}

nlohmann::json roofline_json(const Roofline& r) {
  nlohmann::json j;
  j["model"] = {{"architecture", r.model.architecture}, {"model_type", r.model.model_type},
                {"hidden_size", r.model.hidden}, {"intermediate_size", r.model.intermediate},
                {"num_hidden_layers", r.model.layers}, {"num_attention_heads", r.model.heads},
                {"num_key_value_heads", r.model.kv_heads}, {"head_dim", r.model.head_dim},
                {"vocab_size", r.model.vocab}, {"tie_word_embeddings", r.model.tie_word_embeddings}};
  j["gpu"] = {{"key", r.gpu.key}, {"name", r.gpu.name}, {"mem_bw_gbs", r.gpu.mem_bw_gbs},
              {"bf16_tflops", r.gpu.bf16_tflops}, {"int8_tflops", r.gpu.int8_tflops}, {"mem_gib", r.gpu.mem_gib}};
  j["params"] = r.params;
  j["tensor_parallel_size"] = r.tensor_parallel_size;
  j["kv_bytes_per_token"] = r.kv_bytes_per_token;
  for (WeightFormat f : kWeightFormats) {
    const auto i = static_cast<size_t>(f);
    const char* k = to_string(f);
    j["weight_bytes"][k] = r.weight_bytes[i];
    j["decode_ms_b1"][k] = r.decode_ms_b1[i];
    j["prefill_ms_per_token"][k] = r.prefill_ms_per_token[i];
    j["max_kv_tokens"][k] = r.max_kv_tokens[i];
    for (size_t c = 0; c < kUserContexts.size(); ++c) j["users"][std::to_string(kUserContexts[c])][k] = r.users[c][i];
  }
  j["int4_group_size"] = kInt4GroupSize;
  return j;
}

std::string roofline_text(const Roofline& r) {
  std::string out;
  char buf[256];
  auto line = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  line("model: %s, %lld layers, hidden %lld, heads %lld/%lld kv, head_dim %lld, vocab %lld%s\n",
       r.model.architecture.empty() ? r.model.model_type.c_str() : r.model.architecture.c_str(),
       static_cast<long long>(r.model.layers), static_cast<long long>(r.model.hidden),
       static_cast<long long>(r.model.heads), static_cast<long long>(r.model.kv_heads),
       static_cast<long long>(r.model.head_dim), static_cast<long long>(r.model.vocab),
       r.model.tie_word_embeddings ? ", tied embeddings" : "");
  line("parameters: %lld (%.3f B)\n", static_cast<long long>(r.params), r.params / 1e9);
  line("gpu: %s: %.0f GB/s, %.1f bf16 TFLOPS, %.1f 8-bit TFLOPS, %.0f GiB\n", r.gpu.name.c_str(), r.gpu.mem_bw_gbs,
       r.gpu.bf16_tflops, r.gpu.int8_tflops, r.gpu.mem_gib);
  if (r.tensor_parallel_size > 1)
    line("tensor parallel over %lld GPUs: the figures below are one GPU's\n", static_cast<long long>(r.tensor_parallel_size));
  line("KV cache per token (bf16): %lld bytes (%.1f KiB)\n\n", static_cast<long long>(r.kv_bytes_per_token),
       r.kv_bytes_per_token / 1024.0);
  line("%-8s %14s %14s %16s %14s %10s %10s %10s\n", "weights", "weight GiB", "decode ms b1", "prefill ms/tok",
       "max KV tokens", "users 1k", "users 8k", "users 32k");
  for (WeightFormat f : kWeightFormats) {
    const auto i = static_cast<size_t>(f);
    line("%-8s %14.2f %14.3f %16.5f %14lld %10lld %10lld %10lld\n", to_string(f),
         r.weight_bytes[i] / (1024.0 * 1024.0 * 1024.0), r.decode_ms_b1[i], r.prefill_ms_per_token[i],
         static_cast<long long>(r.max_kv_tokens[i]), static_cast<long long>(r.users[0][i]),
         static_cast<long long>(r.users[1][i]), static_cast<long long>(r.users[2][i]));
  }
  line("\nint8: 1 byte/weight + a bf16 scale per output channel; int4: 0.5 byte/weight + a bf16 scale and a\n"
       "4-bit zero per %lld input channels; embedding, lm_head, norms and biases stay bf16.\n",
       static_cast<long long>(kInt4GroupSize));
  return out;
}

}  // namespace zinfer::bench
