#include "tools/bench/lib/sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>

#include "gpu/cpu/ops.h"

namespace zinfer::bench {

// ---- theoretical lines ----

int64_t step_weight_bytes(const ModelShape& m, WeightFormat f) {
  const int64_t untied_embedding = m.tie_word_embeddings ? 0 : 2 * count_params(m).embedding;
  return weight_bytes(m, f) - untied_embedding;
}

PrefillFlops prefill_flops(const ModelShape& m, int64_t len) {
  const double L = static_cast<double>(len);
  PrefillFlops f;
  f.linear = 2.0 * static_cast<double>(count_params(m).block_linear) * L;
  f.attention = 2.0 * static_cast<double>(m.layers * m.heads * m.head_dim) * L * (L + 1.0);
  f.logits = 2.0 * static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
  return f;
}

LineMs theoretical_prefill_ms(const ModelShape& m, const GpuSpec& gpu, int64_t len) {
  const PrefillFlops flops = prefill_flops(m, len);
  const double bf16_rate = gpu.bf16_tflops * 1e12;
  LineMs out{};
  for (WeightFormat f : kWeightFormats) {
    const double linear_rate = f == WeightFormat::kInt8 ? gpu.int8_tflops * 1e12 : bf16_rate;
    const double compute_s = flops.linear / linear_rate + (flops.attention + flops.logits) / bf16_rate;
    const double memory_s = static_cast<double>(step_weight_bytes(m, f)) / (gpu.mem_bw_gbs * 1e9);
    out[static_cast<size_t>(f)] = std::max(compute_s, memory_s) * 1e3;
  }
  return out;
}

LineMs theoretical_decode_ms(const ModelShape& m, const GpuSpec& gpu, int64_t users, int64_t context) {
  const double kv = static_cast<double>(users) * static_cast<double>(context) * static_cast<double>(kv_bytes_per_token(m));
  LineMs out{};
  for (WeightFormat f : kWeightFormats) {
    out[static_cast<size_t>(f)] = (static_cast<double>(step_weight_bytes(m, f)) + kv) / (gpu.mem_bw_gbs * 1e9) * 1e3;
  }
  return out;
}

// ---- the plan ----

namespace {

void require_positive(const std::vector<int64_t>& values, const char* flag) {
  if (values.empty()) throw std::invalid_argument(std::string(flag) + " is empty");
  for (int64_t v : values) {
    if (v <= 0) throw std::invalid_argument(std::string(flag) + ": " + std::to_string(v) + " is not positive");
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t max_of(const std::vector<int64_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

}  // namespace

void validate_plan(const SweepPlan& plan) {
  if (!plan.prefill && !plan.decode) throw std::invalid_argument("--mode selects neither prefill nor decode");
  if (plan.prefill) require_positive(plan.prefill_lens, "--prefill-lens");
  if (plan.decode) {
    require_positive(plan.users, "--users");
    require_positive(plan.contexts, "--contexts");
  }
  if (plan.repeat <= 0) throw std::invalid_argument("--repeat must be positive");
  if (plan.chunk_tokens <= 0) throw std::invalid_argument("the chunk size for filling contexts must be positive");
}

int64_t blocks_needed(const SweepPlan& plan, int64_t block_size) {
  int64_t need = 0;
  if (plan.prefill) need = ceil_div(max_of(plan.prefill_lens), block_size);
  if (plan.decode) need = std::max(need, max_of(plan.users) * ceil_div(max_of(plan.contexts) + 1, block_size));
  return need;
}

int64_t longest_sequence(const SweepPlan& plan) {
  int64_t longest = 1;
  if (plan.prefill) longest = std::max(longest, max_of(plan.prefill_lens));
  if (plan.decode) longest = std::max(longest, max_of(plan.contexts) + 1);
  return longest;
}

// ---- measurement ----

namespace {

using Clock = std::chrono::steady_clock;

class SweepRunner {
 public:
  SweepRunner(gpu::Backend& backend, const SweepPlan& plan, void (*progress)(const std::string&))
      : backend_(backend), plan_(plan), progress_(progress), rng_(plan.seed),
        block_size_(backend.cache_geometry().block_size), num_blocks_(backend.cache_geometry().num_gpu_blocks),
        vocab_(backend.config().vocab_size) {}

  std::vector<PrefillPoint> prefill() {
    std::vector<PrefillPoint> points;
    for (int64_t len : plan_.prefill_lens) {
      const int64_t blocks = ceil_div(len, block_size_);
      if (blocks > num_blocks_) {
        throw std::runtime_error("prefill of " + std::to_string(len) + " tokens needs " + std::to_string(blocks) +
                                 " KV blocks; the cache has " + std::to_string(num_blocks_));
      }
      if (len > plan_.chunk_tokens) {
        throw std::runtime_error("prefill of " + std::to_string(len) + " tokens is longer than the largest step (" +
                                 std::to_string(plan_.chunk_tokens) + " tokens)");
      }
      gpu::SequenceInput seq = sequence(next_id_++, len, 0, block_range(0, blocks), true);
      PrefillPoint p;
      p.len = len;
      p.measured_ms = median_step_ms({seq});
      finish({seq.seq_id});
      note("prefill L=" + std::to_string(len) + ": " + std::to_string(p.measured_ms) + " ms");
      points.push_back(p);
    }
    return points;
  }

  std::vector<DecodePoint> decode(std::vector<std::string>& skipped) {
    std::vector<DecodePoint> points;
    std::vector<int64_t> users = plan_.users;
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    for (int64_t context : plan_.contexts) {
      const int64_t per_seq = ceil_div(context + 1, block_size_);
      std::vector<int64_t> fit;
      for (int64_t b : users) {
        if (b * per_seq <= num_blocks_) {
          fit.push_back(b);
          continue;
        }
        const std::string why = "decode context " + std::to_string(context) + " x " + std::to_string(b) +
                                " users needs " + std::to_string(b * per_seq) + " KV blocks; the cache has " +
                                std::to_string(num_blocks_);
        if (!plan_.skip_unfit) throw std::runtime_error(why);
        skipped.push_back(why);
      }
      if (fit.empty()) continue;
      const std::vector<uint64_t> ids = fill_context(context, fit.back(), per_seq);
      for (int64_t b : fit) {
        std::vector<gpu::SequenceInput> seqs;
        for (int64_t s = 0; s < b; ++s) {
          seqs.push_back(sequence(ids[s], 1, context, block_range(s * per_seq, per_seq), true));
        }
        DecodePoint p;
        p.context = context;
        p.users = b;
        p.measured_ms = median_step_ms(seqs);
        note("decode context=" + std::to_string(context) + " users=" + std::to_string(b) + ": " +
             std::to_string(p.measured_ms) + " ms/step");
        points.push_back(p);
      }
      finish(ids);
    }
    return points;
  }

 private:
  std::vector<int32_t> block_range(int64_t first, int64_t count) const {
    std::vector<int32_t> table(count);
    for (int64_t i = 0; i < count; ++i) table[i] = static_cast<int32_t>(first + i);
    return table;
  }

  gpu::SequenceInput sequence(uint64_t id, int64_t tokens, int64_t start_pos, std::vector<int32_t> table, bool sample) {
    std::uniform_int_distribution<int32_t> token(0, vocab_ - 1);
    gpu::SequenceInput s;
    s.seq_id = id;
    s.token_ids.resize(tokens);
    for (auto& t : s.token_ids) t = token(rng_);
    s.num_tokens = static_cast<int32_t>(tokens);
    s.start_pos = static_cast<int32_t>(start_pos);
    s.block_table = std::move(table);
    s.sample = sample;
    s.sampling.temperature = 0.0f;  // greedy
    return s;
  }

  // One warm-up step (it also captures a CUDA graph where the backend uses one), then the median
  // of `repeat` timed steps. step() returns the sampled tokens, so it has waited for the device.
  double median_step_ms(std::vector<gpu::SequenceInput> seqs) {
    gpu::BatchInput batch;
    batch.seqs = std::move(seqs);
    backend_.step(batch);
    std::vector<double> ms;
    for (int r = 0; r < plan_.repeat; ++r) {
      const auto t0 = Clock::now();
      backend_.step(batch);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    return n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  }

  // Prefills sequence 0 with `context` random tokens (in steps of at most chunk_tokens), then
  // copies its blocks to the other users' blocks, so every sequence attends to finite values.
  std::vector<uint64_t> fill_context(int64_t context, int64_t users, int64_t per_seq) {
    std::vector<uint64_t> ids(users);
    for (auto& id : ids) id = next_id_++;
    for (int64_t pos = 0; pos < context; pos += plan_.chunk_tokens) {
      const int64_t n = std::min(plan_.chunk_tokens, context - pos);
      gpu::BatchInput batch;
      batch.seqs.push_back(sequence(ids[0], n, pos, block_range(0, per_seq), pos + n == context));
      backend_.step(batch);
    }
    constexpr size_t kCopiesPerStep = 8192;
    gpu::BatchInput copies;
    for (int64_t s = 1; s < users; ++s) {
      for (int64_t j = 0; j < per_seq; ++j) {
        copies.copy.emplace_back(static_cast<int32_t>(j), static_cast<int32_t>(s * per_seq + j));
        if (copies.copy.size() == kCopiesPerStep) {
          backend_.step(copies);
          copies.copy.clear();
        }
      }
    }
    if (!copies.copy.empty()) backend_.step(copies);
    return ids;
  }

  // Drops the backend's per-sequence state (the CUDA backend's device-side last-token slots).
  void finish(const std::vector<uint64_t>& ids) {
    gpu::BatchInput batch;
    batch.finished = ids;
    backend_.step(batch);
  }

  void note(const std::string& line) const {
    if (progress_ != nullptr) progress_(line);
  }

  gpu::Backend& backend_;
  const SweepPlan& plan_;
  void (*progress_)(const std::string&);
  std::mt19937_64 rng_;
  int64_t block_size_;
  int64_t num_blocks_;
  int32_t vocab_;
  uint64_t next_id_ = 1;
};

}  // namespace

SweepResult run_sweep(gpu::Backend& backend, const SweepPlan& plan, const ModelShape& m, const GpuSpec& gpu,
                      void (*progress)(const std::string&)) {
  validate_plan(plan);
  SweepRunner runner(backend, plan, progress);
  SweepResult r;
  if (plan.prefill) {
    r.prefill = runner.prefill();
    for (auto& p : r.prefill) p.theory_ms = theoretical_prefill_ms(m, gpu, p.len);
  }
  if (plan.decode) {
    r.decode = runner.decode(r.skipped);
    for (auto& p : r.decode) p.theory_ms = theoretical_decode_ms(m, gpu, p.users, p.context);
    if (r.decode.empty()) {
      throw std::runtime_error("no decode point fits in the KV cache: " + r.skipped.front() +
                               " (lower --users or --contexts)");
    }
  }
  return r;
}

// ---- output ----

namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string line_columns_header() {
  std::string h;
  for (const char* name : kSweepLineNames) h += std::string(",") + name + "_ms";
  return h;
}

std::string line_columns(const LineMs& ms) {
  std::string s;
  for (double v : ms) {
    s += ',';
    s += fmt(v);
  }
  return s;
}

}  // namespace

std::string prefill_csv(const std::vector<PrefillPoint>& points) {
  std::string out = "L,measured_ms,tok_per_s" + line_columns_header() + "\n";
  for (const auto& p : points) {
    out += std::to_string(p.len) + "," + fmt(p.measured_ms) + "," + fmt(p.tokens_per_s()) + line_columns(p.theory_ms) +
           "\n";
  }
  return out;
}

std::string decode_csv(const std::vector<DecodePoint>& points) {
  std::string out = "context,users,measured_ms,tok_per_s" + line_columns_header() + "\n";
  for (const auto& p : points) {
    out += std::to_string(p.context) + "," + std::to_string(p.users) + "," + fmt(p.measured_ms) + "," +
           fmt(p.tokens_per_s()) + line_columns(p.theory_ms) + "\n";
  }
  return out;
}

std::string sweep_table(const SweepResult& r) {
  std::string out;
  char buf[256];
  if (!r.prefill.empty()) {
    std::snprintf(buf, sizeof buf, "%-8s %12s %12s %12s %12s %12s\n", "prefill", "measured ms", "tok/s", "w16kv16 ms",
                  "w8kv16 ms", "w4kv16 ms");
    out += buf;
    for (const auto& p : r.prefill) {
      std::snprintf(buf, sizeof buf, "%-8lld %12.3f %12.0f %12.3f %12.3f %12.3f\n", static_cast<long long>(p.len),
                    p.measured_ms, p.tokens_per_s(), p.theory_ms[0], p.theory_ms[1], p.theory_ms[2]);
      out += buf;
    }
  }
  if (!r.decode.empty()) {
    if (!out.empty()) out += "\n";
    std::snprintf(buf, sizeof buf, "%-8s %6s %12s %12s %12s %12s %12s\n", "context", "users", "ms/step", "tok/s",
                  "w16kv16 ms", "w8kv16 ms", "w4kv16 ms");
    out += buf;
    for (const auto& p : r.decode) {
      std::snprintf(buf, sizeof buf, "%-8lld %6lld %12.3f %12.0f %12.3f %12.3f %12.3f\n",
                    static_cast<long long>(p.context), static_cast<long long>(p.users), p.measured_ms, p.tokens_per_s(),
                    p.theory_ms[0], p.theory_ms[1], p.theory_ms[2]);
      out += buf;
    }
  }
  for (const auto& s : r.skipped) out += "skipped: " + s + "\n";
  return out;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot open " + path + " for writing");
  f << text;
  f.close();
  if (!f) throw std::runtime_error("cannot write " + path);
}

// ---- CPU figures ----

namespace {

// Best of three runs after one warm-up, in seconds.
template <typename F>
double best_seconds(F&& run) {
  run();
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = Clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

GpuSpec measure_cpu_spec() {
  // Bandwidth: y[1, N] = x[1, K] · W[N, K]^T reads W once (128 MiB of bf16), far beyond the caches.
  constexpr int64_t kN = 8192, kK = 8192;
  std::vector<uint16_t> w(static_cast<size_t>(kN * kK), 0x3c00);  // bf16 0.0078125
  std::vector<float> x(kK, 1.0f), y(kN);
  const double bw_s = best_seconds([&] { gpu::cpu::linear_bf16(x.data(), w.data(), nullptr, y.data(), 1, kN, kK); });
  // Compute: 128 rows against a 1024 x 1024 bf16 matrix (2 MiB, cache resident).
  constexpr int64_t kM = 128, kD = 1024;
  std::vector<float> xs(static_cast<size_t>(kM * kD), 1.0f), ys(static_cast<size_t>(kM * kD));
  const double mm_s = best_seconds(
      [&] { gpu::cpu::linear_bf16(xs.data(), w.data(), nullptr, ys.data(), kM, kD, kD); });
  GpuSpec g;
  g.key = "measured";
  g.name = "this CPU (measured)";
  g.mem_bw_gbs = static_cast<double>(kN * kK * 2) / bw_s / 1e9;
  g.bf16_tflops = 2.0 * kM * kD * kD / mm_s / 1e12;
  g.int8_tflops = g.bf16_tflops;
  return g;
}

}  // namespace zinfer::bench
