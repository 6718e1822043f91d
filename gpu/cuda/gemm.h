// Dense linear layers through cuBLASLt: y[M, N] = x[M, K] · W[N, K]ᵀ, bf16 inputs, float32
// accumulation, bf16 or float32 output (row-major, as PyTorch's nn.Linear).
//
// Nothing is timed while serving. At start-up tune() times cuBLASLt's heuristic candidates for
// every linear layer of the model at a list of row counts (tuning_buckets) and keeps the fastest
// (in a GemmTuningCache, so that a restart is quick). A live product of m rows then takes the
// algorithm of the nearest tuned row count at or above m that cuBLASLt accepts for m (checked
// with cublasLtMatmulAlgoCheck, no launch, no synchronisation), else the heuristic's first
// choice; the plan is kept per exact shape.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/gemm_tuning_cache.h"

namespace zinfer::gpu::cuda {

// One linear layer's product as the model runs it.
struct GemmShape {
  int64_t n = 0, k = 0;
  bool f32_out = false;              // float32 y, else bf16
  bool accumulate = false;           // y += x · wᵀ
  const __nv_bfloat16* w = nullptr; // the layer's weights: candidates are timed on them
  int64_t max_m = 0;                 // the most rows it runs at
  std::vector<int64_t> rows;         // the row counts to tune; empty: tuning_buckets(max_m)
};

struct GemmTuneReport {
  int products = 0;  // (shape, row count) pairs
  int timed = 0;     // of which were timed now (the others came from the cache)
  double seconds = 0;
};

class Gemm {
 public:
  explicit Gemm(size_t workspace_bytes = 32u << 20);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // y = x · wᵀ. x: [m, k] bf16, w: [n, k] bf16, y: [m, n] bf16.
  void linear(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t m, int64_t n, int64_t k,
              cudaStream_t stream);
  void linear_f32_out(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n, int64_t k,
                      cudaStream_t stream);
  // y += x · wᵀ with y float32 [m, n]: the o and down projections adding into the residual
  // stream without rounding their output to bf16 first.
  void linear_add_f32(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n, int64_t k,
                      cudaStream_t stream);

  // Start-up only (it synchronises): every shape at each of its row counts.
  GemmTuneReport tune(const std::vector<GemmShape>& shapes, GemmTuningCache& cache, cudaStream_t stream);
  // 1, 2, 4, 8, 16, then four row counts per octave up to max_m (which is always included).
  static std::vector<int64_t> tuning_buckets(int64_t max_m);

  size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  static constexpr int kCandidates = 8;
  using Key = std::tuple<int64_t, int64_t, int64_t, bool>;  // m, n, k, f32 out
  using ShapeKey = std::tuple<int64_t, int64_t, bool>;      // n, k, f32 out

  Plan describe(int64_t m, int64_t n, int64_t k, bool f32_out) const;
  int heuristic(const Plan& p, cublasLtMatmulHeuristicResult_t* results) const;  // candidates found
  bool accepts(const Plan& p, const cublasLtMatmulAlgo_t& algo) const;
  const Plan& plan(int64_t m, int64_t n, int64_t k, bool f32_out);
  cublasLtMatmulAlgo_t fastest(const Plan& p, const cublasLtMatmulHeuristicResult_t* results, int found,
                               const void* x, const void* w, void* y, float beta, cudaStream_t stream);
  void run(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k, bool f32_out, bool accumulate,
           cudaStream_t stream);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<Key, Plan> plans_;
  std::map<ShapeKey, std::map<int64_t, cublasLtMatmulAlgo_t>> tuned_;  // by row count
};

}  // namespace zinfer::gpu::cuda
