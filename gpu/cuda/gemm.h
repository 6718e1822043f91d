// Dense linear layers through cuBLASLt: y[M, N] = x[M, K] · W[N, K]^T, bf16 inputs, float32
// accumulation, bf16 or float32 output (row-major, as PyTorch's nn.Linear). The algorithm is chosen
// once per (M, N, K, output type) among cuBLASLt's heuristic candidates, by timing them on the first
// call's operands, and cached.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "gpu/cuda/device_memory.h"

namespace zinfer::gpu::cuda {

class Gemm {
 public:
  explicit Gemm(size_t workspace_bytes = 32u << 20);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // y = x · w^T (+ y when accumulate). x: [m, k] bf16, w: [n, k] bf16.
  void linear(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t m, int64_t n,
              int64_t k, cudaStream_t stream, bool accumulate = false);
  void linear_f32_out(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n,
                      int64_t k, cudaStream_t stream);
  // y += x · w^T with y float32 [m, n]: the o and down projections adding into the residual
  // stream without rounding their output to bf16 first. The first call of a shape times
  // cuBLASLt's candidates on `scratch` (any device memory the caller does not need now) when it
  // holds m * n floats, and takes the heuristic's first choice otherwise: timing on y itself would
  // add x · w^T to it once per launch.
  void linear_add_f32(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n, int64_t k,
                      cudaStream_t stream, void* scratch, size_t scratch_bytes);

  size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  struct TuneArgs {
    const void* x;
    const void* w;
    void* y;  // overwritten (or added to, with beta 1) while candidates are timed
    float beta;
    cudaStream_t stream;
  };
  static constexpr int kCandidates = 8;
  using Key = std::tuple<int64_t, int64_t, int64_t, int>;
  const Plan& plan(int64_t m, int64_t n, int64_t k, cudaDataType_t out_type, const TuneArgs* tune);
  cublasLtMatmulAlgo_t fastest(const Plan& p, const cublasLtMatmulHeuristicResult_t* results, int found,
                               const TuneArgs& tune);
  // accumulate: y += x · w^T, candidates timed on tune_y (nullptr: not timed).
  void run(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k, cudaDataType_t out_type,
           cudaStream_t stream, bool accumulate, void* tune_y);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<Key, Plan> plans_;
};

}  // namespace zinfer::gpu::cuda
