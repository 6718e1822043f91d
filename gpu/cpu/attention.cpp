// Paged attention on the CPU: every query token reads its sequence's keys and values through the
// block table, so prefill chunks (with a cached prefix) and decodes share one code path.
#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu/cpu/ops.h"
#include "gpu/quant/fp8.h"

namespace zinfer::gpu::cpu {
namespace {

// Every e4m3fn code's value times the layer's scale: a read is one table lookup.
struct Fp8Table {
  float value[256];
  explicit Fp8Table(float scale) {
    for (int c = 0; c < 256; ++c) value[c] = quant::e4m3_to_float(static_cast<uint8_t>(c)) * scale;
  }
  void decode(const uint8_t* codes, int64_t n, float* out) const {
    for (int64_t i = 0; i < n; ++i) out[i] = value[codes[i]];
  }
};

void write_fp8(const float* x, int64_t n, float scale, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = quant::float_to_e4m3(x[i] / scale);
}

}  // namespace

void write_kv(const PagedKvLayer& cache, const float* k, const float* v, const int64_t* slots, int64_t T) {
  const int64_t row = cache.num_kv_heads * cache.head_dim;
  if (cache.k8 != nullptr) {
    for (int64_t t = 0; t < T; ++t) {
      write_fp8(k + t * row, row, cache.k_scale, cache.k8 + slots[t] * row);
      write_fp8(v + t * row, row, cache.v_scale, cache.v8 + slots[t] * row);
    }
    return;
  }
  for (int64_t t = 0; t < T; ++t) {
    std::copy(k + t * row, k + (t + 1) * row, cache.k + slots[t] * row);
    std::copy(v + t * row, v + (t + 1) * row, cache.v + slots[t] * row);
  }
}

void paged_attention(const float* q, const PagedKvLayer& cache, const AttentionSeq* seqs, int64_t num_seqs,
                     int64_t num_heads, float scale, int64_t sliding_window, float* out) {
  const int64_t D = cache.head_dim;
  const int64_t kv_row = cache.num_kv_heads * D;  // elements per cache slot
  const int64_t group = num_heads / cache.num_kv_heads;
  // Work items are (token, head) pairs of the whole batch.
  std::vector<std::pair<int64_t, int64_t>> token_seq;  // flattened token -> (seq, position)
  for (int64_t s = 0; s < num_seqs; ++s)
    for (int64_t i = 0; i < seqs[s].num_tokens; ++i) token_seq.emplace_back(s, seqs[s].start_pos + i);
  const int64_t items = static_cast<int64_t>(token_seq.size()) * num_heads;
  int64_t total_work = 0;
  for (const auto& [s, pos] : token_seq) total_work += pos + 1;
  const bool fp8 = cache.k8 != nullptr;
  const Fp8Table k_table(fp8 ? cache.k_scale : 1.0f), v_table(fp8 ? cache.v_scale : 1.0f);

#pragma omp parallel if (total_work * num_heads * D >= (1 << 20))
  {
    std::vector<float> scores;
    std::vector<float> acc(D);
    std::vector<float> row(fp8 ? D : 0);  // one dequantized K or V row of an fp8 cache
    auto k_row = [&](int64_t slot, int64_t kvh) -> const float* {
      if (!fp8) return cache.k + slot * kv_row + kvh * D;
      k_table.decode(cache.k8 + slot * kv_row + kvh * D, D, row.data());
      return row.data();
    };
    auto v_row = [&](int64_t slot, int64_t kvh) -> const float* {
      if (!fp8) return cache.v + slot * kv_row + kvh * D;
      v_table.decode(cache.v8 + slot * kv_row + kvh * D, D, row.data());
      return row.data();
    };
#pragma omp for schedule(dynamic, 4)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t local = item / num_heads, h = item % num_heads;
      const auto [s, pos] = token_seq[local];
      const AttentionSeq& seq = seqs[s];
      const int64_t t = seq.token_begin + (pos - seq.start_pos);
      const int64_t kvh = h / group;
      const float* qv = q + (t * num_heads + h) * D;
      const int64_t first = sliding_window > 0 ? std::max<int64_t>(0, pos - sliding_window + 1) : 0;
      const int64_t n = pos + 1 - first;
      scores.resize(n);
      float max_score = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t p = first + j;
        const int64_t slot = static_cast<int64_t>(seq.block_table[p / cache.block_size]) * cache.block_size +
                             p % cache.block_size;
        scores[j] = dot(qv, k_row(slot, kvh), D) * scale;
        max_score = std::max(max_score, scores[j]);
      }
      float denom = 0.0f;
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t p = first + j;
        const int64_t slot = static_cast<int64_t>(seq.block_table[p / cache.block_size]) * cache.block_size +
                             p % cache.block_size;
        const float w = std::exp(scores[j] - max_score);
        denom += w;
        const float* vv = v_row(slot, kvh);
        for (int64_t d = 0; d < D; ++d) acc[d] += w * vv[d];
      }
      float* o = out + (t * num_heads + h) * D;
      const float inv = 1.0f / denom;
      for (int64_t d = 0; d < D; ++d) o[d] = acc[d] * inv;
    }
  }
}

}  // namespace zinfer::gpu::cpu
