// `zinfer-bench sweep`: the prefill and decode curves of the inference literature, measured
// in-process on a gpu::Backend (Backend::step timed directly, no actors), beside the theoretical
// lines of three weight formats with a bf16 KV cache (w16kv16, w8kv16, w4kv16).
//
// Theoretical lines (the weight-format conventions are roofline.h's):
//   decode step   (bytes read + users * context * kv_bytes_per_token) / memory bandwidth
//   prefill       max(compute time, bytes read / memory bandwidth), where compute time is
//                   2 * block_linear_params * L / rate(format)        (w8: the 8-bit rate, W8A8;
//                                                                      w16, w4: the bf16 rate, W4A16)
//                 + 2 * layers * heads * head_dim * L * (L + 1) / bf16 rate   (causal attention:
//                   QK^T and PV, each 2 * head_dim FLOPs per (query, visible key) pair)
//                 + 2 * vocab * hidden / bf16 rate                   (the one sampled row's logits)
//   bytes read    weight_bytes(format) less the embedding table when it is not tied to the
//                 lm_head: a step gathers only its tokens' rows of it, while every other weight
//                 (the lm_head included) is read whole.
// Unlike `roofline`'s "2 * params" per prefill token, the embedding and lm_head are not counted
// per token: the embedding is a gather and the lm_head runs on the sampled row only. For the small
// default model (a 152k vocabulary on hidden 128, 0.8 M block-linear parameters) it would count
// about 25 times the real FLOPs.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "tools/bench/lib/gpu_table.h"
#include "tools/bench/lib/model_shape.h"
#include "tools/bench/lib/roofline.h"

namespace zinfer::bench {

// Milliseconds of the three theoretical lines, indexed by WeightFormat (bf16, int8, int4).
using LineMs = std::array<double, 3>;
inline constexpr std::array<const char*, 3> kSweepLineNames = {"w16kv16", "w8kv16", "w4kv16"};

// Weight bytes one forward step reads (see "bytes read" above).
int64_t step_weight_bytes(const ModelShape& m, WeightFormat f);

struct PrefillFlops {
  double linear = 0;     // block linears, at the format's rate
  double attention = 0;  // causal attention, at the bf16 rate
  double logits = 0;     // one lm_head row, at the bf16 rate
};
PrefillFlops prefill_flops(const ModelShape& m, int64_t len);

LineMs theoretical_prefill_ms(const ModelShape& m, const GpuSpec& gpu, int64_t len);
LineMs theoretical_decode_ms(const ModelShape& m, const GpuSpec& gpu, int64_t users, int64_t context);

struct PrefillPoint {
  int64_t len = 0;
  double measured_ms = 0;
  LineMs theory_ms{};
  double tokens_per_s() const { return measured_ms > 0 ? static_cast<double>(len) * 1e3 / measured_ms : 0; }
};

struct DecodePoint {
  int64_t context = 0;
  int64_t users = 0;
  double measured_ms = 0;
  LineMs theory_ms{};
  double tokens_per_s() const { return measured_ms > 0 ? static_cast<double>(users) * 1e3 / measured_ms : 0; }
};

struct SweepPlan {
  bool prefill = true;
  bool decode = true;
  std::vector<int64_t> prefill_lens;
  std::vector<int64_t> users;
  std::vector<int64_t> contexts;
  int repeat = 5;                 // timed runs per point, after one warm-up
  uint64_t seed = 0;              // of the random token ids
  int64_t chunk_tokens = 8192;    // longest step when filling a context (max_num_batched_tokens)
  bool skip_unfit = true;         // decode points the KV cache cannot hold: skip (else error)
};

struct SweepResult {
  std::vector<PrefillPoint> prefill;
  std::vector<DecodePoint> decode;
  std::vector<std::string> skipped;  // one line per decode point left out, with the reason
};

// Checks the plan's values (positive, non-empty where its mode needs them); throws
// std::invalid_argument naming the flag.
void validate_plan(const SweepPlan& plan);

// KV blocks of `block_size` tokens the largest point of the plan needs: the longest prompt, or
// users * ceil((context + 1) / block_size) for the largest users count and context.
int64_t blocks_needed(const SweepPlan& plan, int64_t block_size);
// The longest position + 1 any point reaches.
int64_t longest_sequence(const SweepPlan& plan);

// Runs the plan on `backend` and fills in the theoretical lines for (m, gpu). Prefill points are
// run on the same blocks; decode contexts are filled by prefilling one sequence and copying its
// blocks to the others (copy-on-write copies), so that every sequence has its own finite KV.
// `progress` (may be null) receives a line per point.
SweepResult run_sweep(gpu::Backend& backend, const SweepPlan& plan, const ModelShape& m, const GpuSpec& gpu,
                      void (*progress)(const std::string&) = nullptr);

std::string prefill_csv(const std::vector<PrefillPoint>& points);
std::string decode_csv(const std::vector<DecodePoint>& points);
// The short table printed to stdout.
std::string sweep_table(const SweepResult& r);

// Writes `text` to `path`; throws std::runtime_error naming the file on failure.
void write_text_file(const std::string& path, const std::string& text);

// The CPU's figures measured with the CPU backend's own kernels (gpu/cpu/ops.h): memory bandwidth
// as a matrix-vector product over 128 MiB of bf16 weights, compute rate as a 128-row product on
// bf16 weights. Used for the lines when the device is the CPU and no figures are given. Both the
// bf16 and the 8-bit rate are set to the measured rate (the CPU kernels have no 8-bit path).
GpuSpec measure_cpu_spec();

}  // namespace zinfer::bench
