// The forward pass over a flattened batch (the model definition over CudaBackend::Ops), its CUDA
// graphs for decode-only steps, and the start-up warm-up that keeps tuning and capture off the
// serving path: cuBLASLt is timed for every linear layer at the row counts a step can have
// (Gemm::tune, kept in a file keyed by GPU and library versions), the layers of 1-2 row decode
// steps are given to the GEMV or cuBLASLt by timing those steps (decode_linear_plan.h), and every
// decode bucket's graph is captured before the first request.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "gpu/cuda/cuda_backend_impl.h"
#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/cuda_ops.h"
#include "gpu/cuda/gemv.h"
#include "gpu/cuda/stream_timer.h"

namespace zinfer::gpu::cuda {

namespace {
constexpr int32_t kFusedDecodeMaxTokens = 2;
}  // namespace

bool CudaBackend::fused_decode(int32_t num_tokens) const {
  const ModelConfig& c = config_;
  return num_tokens >= 1 && num_tokens <= kFusedDecodeMaxTokens && gemv_supports(num_tokens, c.hidden_size) &&
         gemv_supports(num_tokens, c.num_attention_heads * c.head_dim) && gemv_supports(num_tokens, c.intermediate_size);
}

int32_t CudaBackend::decode_splits(int32_t num_tokens) const {
  // Enough blocks to cover the chip a few times over; each split keeps >= 64 keys (the kernel
  // uses fewer splits for shorter contexts on its own).
  const ModelConfig& c = config_;
  const int32_t head_groups = (c.num_attention_heads / c.num_key_value_heads + 7) / 8;
  const int64_t blocks_per_split = static_cast<int64_t>(num_tokens) * c.num_key_value_heads * head_groups;
  int64_t splits = (4 * static_cast<int64_t>(num_sms_) + blocks_per_split - 1) / blocks_per_split;
  // A token attends at most max_model_len keys, or the sliding window's.
  const int64_t max_keys = c.sliding_window > 0 ? std::min(c.sliding_window, max_model_len_) : max_model_len_;
  splits = std::min<int64_t>(splits, (max_keys + 63) / 64);
  const int64_t capacity = static_cast<int64_t>(act_.partial_ml.bytes() / 8);  // (m, l) pairs
  splits = std::min<int64_t>(splits, capacity / (static_cast<int64_t>(num_tokens) * c.num_attention_heads));
  return static_cast<int32_t>(std::clamp<int64_t>(splits, 1, max_splits_));
}

int32_t CudaBackend::graph_bucket(int32_t n) const {
  // A bucket's padded step must fit the activations (max_tokens_ rows) as well as the decode
  // batch: a tool may size the backend for fewer tokens than sequences.
  const int32_t most = std::min(options_.max_num_seqs, max_tokens_);
  if (n <= 0 || n > most) return 0;
  int32_t bucket = 1;
  while (bucket < n && bucket < 8) bucket *= 2;
  if (bucket >= n) return std::min(bucket, most);
  bucket = (n + 15) / 16 * 16;  // beyond 8: steps of 16
  return std::min(bucket, most);
}

int32_t CudaBackend::run_layers(const PackedStep& st) {
  Ops ops(*this, st);
  model_->layers(ops);
  return ops.exchanges();
}

void CudaBackend::make_room_for_exchanges() {
  if (exchange_ == nullptr || !exchange_->needs_reset()) return;
  // Every rank reaches this before the same step (they count the same exchanges). The ranks'
  // pushes write into each other's staging areas: none may run a step while one clears its own.
  check_cuda(cudaStreamSynchronize(compute_), "residual exchange reset");
  rank_.group->all_reduce_min(rank_.rank, 0);
  exchange_->reset();
  rank_.group->all_reduce_min(rank_.rank, 0);
}

void CudaBackend::run_head(const PackedStep& st, std::vector<float>* all_rows) {
  Ops ops(*this, st, all_rows);
  model_->head(ops);
}

void CudaBackend::run_layers_maybe_graph(const PackedStep& st) {
  // Every bucket's graph was captured at start-up (warm_up); a step without one runs eagerly.
  auto it = st.decode_only ? graphs_.find(st.padded_tokens) : graphs_.end();
  make_room_for_exchanges();
  if (it == graphs_.end() || graph_bucket(st.num_tokens) != st.padded_tokens) {
    const int32_t exchanges = run_layers(st);
    if (exchange_ != nullptr) exchange_->count(exchanges);
    return;
  }
  check_cuda(cudaGraphLaunch(it->second, compute_), "cudaGraphLaunch");
  if (exchange_ != nullptr) exchange_->count(graph_exchanges_.at(st.padded_tokens));
}

namespace {

// Runs a model definition without computing anything, to learn which products its ops send to
// cuBLASLt (for any architecture, without the backend knowing the definition's weights).
class GemmShapeRecorder final : public models::ForwardOps {
 public:
  // dense: where int4 layers are dequantized for cuBLASLt (CudaBackend::Ops::w4_linear), which
  // they reach only above kW4GemmMaxRows rows, and always as the LM head.
  GemmShapeRecorder(const CudaWeightStore& w, int64_t layer_rows, int64_t head_rows, const __nv_bfloat16* dense)
      : w_(w), layer_rows_(layer_rows), head_rows_(head_rows), dense_(dense) {}
  void embed(models::Linear) override {}
  void norm_linear(models::Vector, models::Linear w, models::Buffer) override { add(w, false, false, layer_rows_); }
  void norm_gated_linear(models::Vector, models::Linear w, models::Activation, models::Buffer) override {
    add(w, false, false, layer_rows_);
  }
  void rotary_cache_write(const models::AttentionInputs&, int32_t) override {}
  void attention(int32_t) override {}
  void linear_residual(models::Buffer, models::Linear w, models::Vector) override { add(w, true, true, layer_rows_); }
  void logits(models::Vector, models::Linear head) override { add(head, true, false, head_rows_, true); }
  std::vector<GemmShape> shapes;

 private:
  void add(models::Linear w, bool f32_out, bool accumulate, int64_t max_m, bool head = false) {
    if (w_.fp8().has(w)) return;  // not a bf16 cuBLASLt product (fp8_linear.h)
    GemmShape s{w_.rows(w), w_.cols(w), f32_out, accumulate, nullptr, max_m, {}};
    if (w_.int4(w)) {
      s.w = dense_;
      if (!head) {
        for (int64_t m : Gemm::tuning_buckets(max_m))
          if (m > kW4GemmMaxRows) s.rows.push_back(m);
        if (s.rows.empty()) return;
      }
    } else {
      s.w = w_.matrix(w);
    }
    for (const GemmShape& t : shapes)
      if (t.n == s.n && t.k == s.k && t.f32_out == s.f32_out && t.accumulate == s.accumulate && t.max_m == s.max_m &&
          t.rows == s.rows)
        return;  // another layer of the same shape
    shapes.push_back(s);
  }
  const CudaWeightStore& w_;
  int64_t layer_rows_, head_rows_;
  const __nv_bfloat16* dense_;
};

// The dense linear layers of a model definition in the order it runs them (the ones the GEMV
// could take: int4 and FP8 layers never run on it).
class LinearShapeRecorder final : public models::ForwardOps {
 public:
  explicit LinearShapeRecorder(const CudaWeightStore& w) : w_(w) {}
  void embed(models::Linear) override {}
  void norm_linear(models::Vector, models::Linear w, models::Buffer) override { add(LinearOp::kNormLinear, w); }
  void norm_gated_linear(models::Vector, models::Linear w, models::Activation, models::Buffer) override {
    add(LinearOp::kNormGatedLinear, w);
  }
  void rotary_cache_write(const models::AttentionInputs&, int32_t) override {}
  void attention(int32_t) override {}
  void linear_residual(models::Buffer, models::Linear w, models::Vector) override {
    add(LinearOp::kLinearResidual, w);
  }
  void logits(models::Vector, models::Linear) override {}
  std::vector<LinearShape> shapes;

 private:
  void add(LinearOp op, models::Linear w) {
    if (!w_.int4(w) && !w_.fp8().has(w)) shapes.push_back({op, w_.rows(w), w_.cols(w)});
  }
  const CudaWeightStore& w_;
};

// Above this share of a step, a plan that moves a layer to cuBLASLt is faster, not noise.
constexpr double kChoiceMargin = 0.005;

}  // namespace

std::vector<GemmShape> CudaBackend::gemm_shapes() const {
  // qkv and gate_up (bf16 out), o and down (added into the float32 residual) up to the largest
  // step; the LM head (float32 logits) up to logit_rows_ rows.
  GemmShapeRecorder recorder(weights_, max_tokens_, logit_rows_, act_.w4_dense.as<__nv_bfloat16>());
  model_->layers(recorder);
  model_->head(recorder);
  return recorder.shapes;
}

void CudaBackend::tune_linear_layers() {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, rank_.device), "cudaGetDeviceProperties");
  int runtime = 0, driver = 0;
  check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  char device[512];
  std::snprintf(device, sizeof(device), "%s sm_%d%d %d SMs, CUDA runtime %d, driver %d, cuBLASLt %zu", prop.name,
                prop.major, prop.minor, prop.multiProcessorCount, runtime, driver, cublasLtGetVersion());
  GemmTuningCache cache(GemmTuningCache::default_path(options_.tuning_cache, device), device);
  const GemmTuneReport tuned = gemm_->tune(gemm_shapes(), cache, compute_);
  const bool saved = cache.save();
  warm_up_.tuning_s = tuned.seconds;
  if (rank_.rank == 0)
    std::fprintf(stderr, "zinfer cuda: cuBLASLt tuned for %d products (%d timed, %zu from %s%s) in %.2f s\n",
               tuned.products, tuned.timed, cache.loaded(), cache.path().empty() ? "no cache file" : cache.path().c_str(),
               saved ? "" : ", which could not be written", tuned.seconds);
}

cudaGraphExec_t CudaBackend::capture_layers(const PackedStep& st, int32_t* exchanges) {
  const int32_t eager = run_layers(st);
  if (exchange_ != nullptr) exchange_->count(eager);
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamBeginCapture(compute_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  try {
    *exchanges = run_layers(st);
  } catch (...) {
    cudaStreamEndCapture(compute_, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    throw;
  }
  check_cuda(cudaStreamEndCapture(compute_, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check_cuda(status, "cudaGraphInstantiate");
  return exec;
}

double CudaBackend::time_decode_layers(int32_t bucket) {
  // The bucket's padding step (its tokens write the scratch block only), run as it will be
  // served; the best of three rounds of back-to-back steps.
  constexpr int kRounds = 3, kSteps = 5;
  PackedStep st = upload_step({}, bucket);
  st.decode_only = true;
  int32_t exchanges = 0;
  auto destroy = [](cudaGraphExec_t g) { cudaGraphExecDestroy(g); };  // on an exception only
  std::unique_ptr<CUgraphExec_st, decltype(destroy)> exec(
      options_.cuda_graphs ? capture_layers(st, &exchanges) : nullptr, destroy);
  auto step = [&] {
    if (exec != nullptr) check_cuda(cudaGraphLaunch(exec.get(), compute_), "cudaGraphLaunch");
    else run_layers(st);
  };
  const double best = best_round_seconds(compute_, kRounds, kSteps, step);
  if (exec != nullptr) check_cuda(cudaGraphExecDestroy(exec.release()), "cudaGraphExecDestroy");
  return best;
}

void CudaBackend::choose_decode_linears() {
  // A tensor-parallel group keeps every layer on the GEMV: its row-parallel GEMVs all-reduce
  // through the residual exchange in their epilogue, which cuBLASLt + NCCL's all-reduce cannot
  // match, and the ranks would have to agree on one plan from timings of their own.
  if (rank_.group != nullptr) return;
  const auto start = std::chrono::steady_clock::now();
  LinearShapeRecorder recorder(weights_);
  model_->layers(recorder);
  if (recorder.shapes.empty()) return;  // every linear layer quantized: nothing runs on the GEMV
  for (int32_t bucket = 1; bucket <= std::min(options_.max_num_seqs, max_tokens_); ++bucket) {
    if (!fused_decode(bucket) || graph_bucket(bucket) != bucket) continue;
    const BucketChoice c = choose_bucket(recorder.shapes, kChoiceMargin, [&](const std::set<LinearShape>& gemm) {
      decode_linears_.set_gemm(bucket, gemm);
      return time_decode_layers(bucket);
    });
    decode_linears_.set_gemm(bucket, c.gemm);
    if (rank_.rank == 0) std::fprintf(stderr, "zinfer cuda: %s\n", c.describe(bucket).c_str());
  }
  warm_up_.choice_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void CudaBackend::capture_decode_graphs() {
  // Each bucket's graph: one eager step first (the GEMVs' and cuBLASLt's first launches), then
  // the capture. A bucket's warm-up step is all padding: its tokens write their K/V into the
  // scratch block only.
  const auto start = std::chrono::steady_clock::now();
  if (options_.cuda_graphs) {
    for (int32_t bucket = 1; bucket <= std::min(options_.max_num_seqs, max_tokens_); ++bucket) {
      if (graph_bucket(bucket) != bucket) continue;
      PackedStep st = upload_step({}, bucket);
      st.decode_only = true;
      graphs_.emplace(bucket, capture_layers(st, &graph_exchanges_[bucket]));
      // The next bucket packs its arrays into the same pinned buffer this one's upload reads.
      check_cuda(cudaStreamSynchronize(compute_), "graph warm-up step");
    }
  }
  check_cuda(cudaStreamSynchronize(compute_), "graph capture");
  warm_up_.graphs_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace zinfer::gpu::cuda
