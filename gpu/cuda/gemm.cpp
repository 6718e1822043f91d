#include "gpu/cuda/gemm.h"

#include <string>

#include "gpu/cuda/cuda_check.h"

namespace zinfer::gpu::cuda {

Gemm::Gemm(size_t workspace_bytes) : workspace_(workspace_bytes, "cuBLASLt workspace") {
  check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
}

Gemm::~Gemm() {
  for (auto& [key, p] : plans_) {
    cublasLtMatrixLayoutDestroy(p.a);
    cublasLtMatrixLayoutDestroy(p.b);
    cublasLtMatrixLayoutDestroy(p.c);
    cublasLtMatmulDescDestroy(p.op);
  }
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

// cuBLASLt is column-major. Row-major y[m, n] is column-major y^T[n, m] = W[n, k] · x^T[k, m]:
// A = W stored column-major as [k, n] (transposed), B = x stored column-major as [k, m].
const Gemm::Plan& Gemm::plan(int64_t m, int64_t n, int64_t k, cudaDataType_t out_type, const TuneArgs* tune) {
  const Key key{m, n, k, static_cast<int>(out_type)};
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  Plan p;
  check_cublas(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)),
               "set TRANSA");
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)),
               "set TRANSB");
  check_cublas(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, k, n, k), "layout A");
  check_cublas(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, k, m, k), "layout B");
  check_cublas(cublasLtMatrixLayoutCreate(&p.c, out_type, n, m, n), "layout C");

  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const size_t ws = workspace_.bytes();
  check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "set workspace preference");
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.c, p.c, pref, kCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    throw CudaError("cuBLASLt found no algorithm for a bf16 GEMM of m=" + std::to_string(m) +
                    " n=" + std::to_string(n) + " k=" + std::to_string(k));
  }
  p.algo = results[0].algo;
  if (tune != nullptr && found > 1) p.algo = fastest(p, results, found, *tune);
  return plans_.emplace(key, p).first->second;
}

// Times each candidate on the real operands (y is overwritten, beta = 0) and keeps the fastest:
// the heuristic's first choice is often not the best for skinny (decode) shapes. Each candidate is
// timed over consecutive launches after its warm-up. (Tried: interleaved rounds keeping each
// candidate's best pair of launches; it chose algorithms that are fast in a short burst and slow
// when sustained: 8192^3 at 683-708 instead of 796-799 TFLOP/s, prefill of 4,096 tokens 107-108
// instead of 104-105 ms, same H200, alternating processes.)
cublasLtMatmulAlgo_t Gemm::fastest(const Plan& p, const cublasLtMatmulHeuristicResult_t* results, int found,
                                   const TuneArgs& t) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  const float alpha = 1.f, beta = t.beta;
  float best_ms = 0.f;
  int best = 0;
  for (int i = 0; i < found; ++i) {
    auto launch = [&] {
      return cublasLtMatmul(handle_, p.op, &alpha, t.w, p.a, t.x, p.b, &beta, t.y, p.c, t.y, p.c, &results[i].algo,
                            workspace_.get(), workspace_.bytes(), t.stream);
    };
    if (launch() != CUBLAS_STATUS_SUCCESS) continue;  // warm-up; a candidate that fails is skipped
    check_cuda(cudaEventRecord(start, t.stream), "cudaEventRecord");
    bool ok = true;
    for (int r = 0; r < 3; ++r) ok &= launch() == CUBLAS_STATUS_SUCCESS;
    check_cuda(cudaEventRecord(stop, t.stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.f;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (ok && (i == 0 || ms < best_ms)) {
      best_ms = ms;
      best = i;
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return results[best].algo;
}

void Gemm::run(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k, cudaDataType_t out_type,
               cudaStream_t stream, bool accumulate, void* tune_y) {
  if (m == 0) return;
  // Candidates are timed only when the stream is not being captured into a graph, and for an
  // accumulating product only on the caller's scratch output.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;
  const TuneArgs tune{x, w, tune_y, beta, stream};
  const Plan& p = plan(m, n, k, out_type, tune_y != nullptr && capture == cudaStreamCaptureStatusNone ? &tune : nullptr);
  check_cublas(cublasLtMatmul(handle_, p.op, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.c, &p.algo,
                              workspace_.get(), workspace_.bytes(), stream),
               "cublasLtMatmul");
}

void Gemm::linear(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t m, int64_t n,
                  int64_t k, cudaStream_t stream, bool accumulate) {
  run(x, w, y, m, n, k, CUDA_R_16BF, stream, accumulate, accumulate ? nullptr : y);
}

void Gemm::linear_add_f32(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n, int64_t k,
                          cudaStream_t stream, void* scratch, size_t scratch_bytes) {
  const bool fits = scratch != nullptr && scratch_bytes >= static_cast<size_t>(m) * static_cast<size_t>(n) * 4;
  run(x, w, y, m, n, k, CUDA_R_32F, stream, true, fits ? scratch : nullptr);
}

void Gemm::linear_f32_out(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n,
                          int64_t k, cudaStream_t stream) {
  run(x, w, y, m, n, k, CUDA_R_32F, stream, false, y);
}

}  // namespace zinfer::gpu::cuda
