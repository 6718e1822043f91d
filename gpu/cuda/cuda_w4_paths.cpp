// The start-up choice among the ways an int4 layer of more than a few rows runs (w4_path_plan.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <set>

#include "gpu/cuda/cuda_backend_impl.h"
#include "gpu/cuda/random_fill.h"
#include "gpu/cuda/stream_timer.h"
#include "gpu/cuda/w4_gemm.h"

namespace zinfer::gpu::cuda {
namespace {

// The int4 linear layers of a model definition's layers (not its head: an int4 LM head always
// runs dequantized), by shape and output.
class Int4ShapeRecorder final : public models::ForwardOps {
 public:
  explicit Int4ShapeRecorder(const CudaWeightStore& w) : w_(w) {}
  void embed(models::Linear) override {}
  void norm_linear(models::Vector, models::Linear w, models::Buffer) override { add(w, false); }
  void norm_gated_linear(models::Vector, models::Linear w, models::Activation, models::Buffer) override {
    add(w, false);
  }
  void rotary_cache_write(const models::AttentionInputs&, int32_t) override {}
  void attention(int32_t) override {}
  void linear_residual(models::Buffer, models::Linear w, models::Vector) override { add(w, true); }
  void logits(models::Vector, models::Linear) override {}
  std::set<W4PathPlan::Shape> shapes;

 private:
  void add(models::Linear w, bool residual) {
    if (w_.int4(w)) shapes.insert({w_.rows(w), w_.cols(w), residual});
  }
  const CudaWeightStore& w_;
};

// Row buckets below kW4GemmMaxRows where the kernel of few rows meets the wide kernel.
constexpr int64_t kFewRowBuckets[] = {16, 32, 48, 64};

}  // namespace

void CudaBackend::choose_w4_paths() {
  const std::vector<W4Weight> layers = weights_.int4_layers();
  if (layers.empty()) return;
  Int4ShapeRecorder recorder(weights_);
  model_->layers(recorder);
  if (recorder.shapes.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  const int64_t T = max_tokens_;
  std::vector<int64_t> buckets;
  for (int64_t m : kFewRowBuckets)
    if (m <= T) buckets.push_back(m);
  for (int64_t m : Gemm::tuning_buckets(T))  // the buckets cuBLASLt was tuned at
    if (m > kW4GemmMaxRows) buckets.push_back(m);
  int64_t most_n = 0, most_k = 0;
  for (const W4PathPlan::Shape& s : recorder.shapes) most_n = std::max(most_n, s.n), most_k = std::max(most_k, s.k);
  // Scratch operands for the largest step (freed before the KV cache takes the free memory).
  DeviceBuffer x(static_cast<size_t>(T * most_k) * 2, "int4 path timing x");
  DeviceBuffer y(static_cast<size_t>(T * most_n) * 4, "int4 path timing y");
  check_cuda(launch_fill_random_bf16(x.as<__nv_bfloat16>(), T * most_k, 5, 0.f, 1.f, compute_), "fill");
  check_cuda(cudaMemsetAsync(y.get(), 0, y.bytes(), compute_), "cudaMemsetAsync");
  const auto* dense = act_.w4_dense.as<__nv_bfloat16>();

  auto best_of = [&](auto&& run) { return best_round_seconds(compute_, 3, 1, run); };  // seconds
  constexpr double kCannot = std::numeric_limits<double>::infinity();
  for (const W4PathPlan::Shape& s : recorder.shapes) {
    const auto layer = std::find_if(layers.begin(), layers.end(), [&](const W4Weight& w) {
      return w.n == s.n && w.k == s.k;
    });
    if (layer == layers.end()) continue;
    for (int64_t m : buckets) {
      W4GemmArgs a;
      a.w = *layer;
      a.x = x.as<__nv_bfloat16>();
      a.m = static_cast<int32_t>(m);
      a.output = s.residual ? W4Output::kAddToResidual : W4Output::kBf16;
      a.y = y.as<__nv_bfloat16>();
      a.residual = y.as<float>();
      a.partials = act_.w4_partials.as<float>();
      a.counters = act_.w4_counters.as<uint32_t>();
      W4PathPlan::Timing t{kCannot, kCannot, kCannot, kCannot};
      if (m <= kW4GemmMaxRows) {
        t[static_cast<int>(W4Path::kFewRows)] =
            best_of([&] { check_cuda(launch_w4_gemm(a, compute_), "int4 few-row timing"); });
      }
      for (const W4Path wide : {W4Path::kWide128, W4Path::kWide256}) {
        a.wide_tokens = wide == W4Path::kWide128 ? 128 : 256;
        if (m <= kW4GemmMaxRows && a.wide_tokens == 256) continue;  // a tile of mostly padding
        t[static_cast<int>(wide)] = best_of([&] { check_cuda(launch_w4_gemm_wide(a, compute_), "int4 wide timing"); });
      }
      if (m > kW4GemmMaxRows) {
        t[static_cast<int>(W4Path::kDequantized)] = best_of([&] {
          check_cuda(launch_w4_dequantize(*layer, act_.w4_dense.as<__nv_bfloat16>(), compute_),
                     "int4 dequantize timing");
          if (s.residual) gemm_->linear_add_f32(a.x, dense, a.residual, m, s.n, s.k, compute_);
          else gemm_->linear(a.x, dense, a.y, m, s.n, s.k, compute_);
        });
      }
      w4_paths_.record(s, m, t);
    }
  }
  check_cuda(cudaStreamSynchronize(compute_), "int4 path timing");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  warm_up_.tuning_s += seconds;
  if (rank_.rank == 0)
    std::fprintf(stderr, "zinfer cuda: int4 layers past 16 rows timed in %.2f s:\n%s", seconds,
                 w4_paths_.describe().c_str());
}

}  // namespace zinfer::gpu::cuda
