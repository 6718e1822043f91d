#include "gpu/cuda/gemm.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/stream_timer.h"

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

std::vector<int64_t> Gemm::tuning_buckets(int64_t max_m) {
  std::vector<int64_t> out;
  for (int64_t m = 1; m <= std::min<int64_t>(16, max_m); m *= 2) out.push_back(m);
  // Above 16 rows four steps per octave: 20, 24, 28, 32, 40, 48, ...
  for (int64_t base = 16; base < max_m; base *= 2)
    for (int64_t step = 1; step <= 4; ++step)
      if (const int64_t m = base + base * step / 4; m <= max_m) out.push_back(m);
  if (out.empty() || out.back() != max_m) out.push_back(max_m);
  return out;
}

// cuBLASLt is column-major. Row-major y[m, n] is column-major yᵀ[n, m] = W[n, k] · xᵀ[k, m]:
// A = W stored column-major as [k, n] (transposed), B = x stored column-major as [k, m].
Gemm::Plan Gemm::describe(int64_t m, int64_t n, int64_t k, bool f32_out) const {
  Plan p;
  check_cublas(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)),
               "set TRANSA");
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)),
               "set TRANSB");
  check_cublas(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, k, n, k), "layout A");
  check_cublas(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, k, m, k), "layout B");
  check_cublas(cublasLtMatrixLayoutCreate(&p.c, f32_out ? CUDA_R_32F : CUDA_R_16BF, n, m, n), "layout C");
  return p;
}

int Gemm::heuristic(const Plan& p, cublasLtMatmulHeuristicResult_t* results) const {
  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const size_t ws = workspace_.bytes();
  check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "set workspace preference");
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.c, p.c, pref, kCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  return status == CUBLAS_STATUS_SUCCESS ? found : 0;
}

bool Gemm::accepts(const Plan& p, const cublasLtMatmulAlgo_t& algo) const {
  cublasLtMatmulHeuristicResult_t result{};
  return cublasLtMatmulAlgoCheck(handle_, p.op, p.a, p.b, p.c, p.c, &algo, &result) == CUBLAS_STATUS_SUCCESS &&
         result.workspaceSize <= workspace_.bytes();
}

// The live path: descriptors and a choice, no timing. The tuned row counts are tried from the
// nearest at or above m upwards, then below it.
const Gemm::Plan& Gemm::plan(int64_t m, int64_t n, int64_t k, bool f32_out) {
  const Key key{m, n, k, f32_out};
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  Plan p = describe(m, n, k, f32_out);
  bool chosen = false;
  if (auto t = tuned_.find(ShapeKey{n, k, f32_out}); t != tuned_.end()) {
    const auto& by_m = t->second;
    std::vector<const cublasLtMatmulAlgo_t*> order;
    for (auto it = by_m.lower_bound(m); it != by_m.end(); ++it) order.push_back(&it->second);
    for (auto it = std::make_reverse_iterator(by_m.lower_bound(m)); it != by_m.rend(); ++it) order.push_back(&it->second);
    for (const cublasLtMatmulAlgo_t* algo : order) {
      if (accepts(p, *algo)) {
        p.algo = *algo;
        chosen = true;
        break;
      }
    }
  }
  if (!chosen) {
    cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
    if (heuristic(p, results) == 0) {
      throw CudaError("cuBLASLt found no algorithm for a bf16 GEMM of m=" + std::to_string(m) + " n=" +
                      std::to_string(n) + " k=" + std::to_string(k));
    }
    p.algo = results[0].algo;
  }
  return plans_.emplace(key, p).first->second;
}

// Times each candidate on the given operands and keeps the fastest: the heuristic's first choice
// is often not the best for skinny (decode) shapes. Each candidate runs 3 consecutive launches
// after its warm-up, which chooses algorithms that stay fast when sustained (interleaved short
// bursts favoured ones that are not: docs/benchmarks/gpu.md).
cublasLtMatmulAlgo_t Gemm::fastest(const Plan& p, const cublasLtMatmulHeuristicResult_t* results, int found,
                                   const void* x, const void* w, void* y, float beta, cudaStream_t stream) {
  StreamTimer timer;
  const float alpha = 1.f;
  float best_ms = 0.f;
  int best = -1;
  for (int i = 0; i < found; ++i) {
    auto launch = [&] {
      return cublasLtMatmul(handle_, p.op, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.c, &results[i].algo,
                            workspace_.get(), workspace_.bytes(), stream);
    };
    if (launch() != CUBLAS_STATUS_SUCCESS) continue;  // warm-up; a candidate that fails is skipped
    timer.start(stream);
    bool ok = true;
    for (int r = 0; r < 3; ++r) ok &= launch() == CUBLAS_STATUS_SUCCESS;
    const float ms = timer.stop_ms(stream);
    if (ok && (best < 0 || ms < best_ms)) {
      best_ms = ms;
      best = i;
    }
  }
  return results[std::max(best, 0)].algo;
}

GemmTuneReport Gemm::tune(const std::vector<GemmShape>& shapes, GemmTuningCache& cache, cudaStream_t stream) {
  const auto start = std::chrono::steady_clock::now();
  GemmTuneReport report;
  size_t x_bytes = 0, y_bytes = 0;
  auto rows_of = [](const GemmShape& s) { return s.rows.empty() ? tuning_buckets(s.max_m) : s.rows; };
  for (const GemmShape& s : shapes) {
    for (int64_t m : rows_of(s)) {
      x_bytes = std::max(x_bytes, static_cast<size_t>(m * s.k) * 2);
      y_bytes = std::max(y_bytes, static_cast<size_t>(m * s.n) * (s.f32_out ? 4 : 2));
    }
  }
  DeviceBuffer x, y;  // allocated only when something must be timed
  for (const GemmShape& s : shapes) {
    for (int64_t m : rows_of(s)) {
      ++report.products;
      const GemmTuneKey key{m, s.n, s.k, s.f32_out, s.accumulate};
      Plan p = describe(m, s.n, s.k, s.f32_out);
      cublasLtMatmulAlgo_t algo{};
      bool have = cache.find(key, &algo) && accepts(p, algo);
      if (!have) {
        cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
        const int found = heuristic(p, results);
        if (found > 0) {
          if (x.get() == nullptr) {
            x = DeviceBuffer(x_bytes, "GEMM tuning input");
            y = DeviceBuffer(y_bytes, "GEMM tuning output");
            check_cuda(cudaMemsetAsync(x.get(), 0, x_bytes, stream), "cudaMemsetAsync");
            check_cuda(cudaMemsetAsync(y.get(), 0, y_bytes, stream), "cudaMemsetAsync");
          }
          algo = fastest(p, results, found, x.get(), s.w, y.get(), s.accumulate ? 1.f : 0.f, stream);
          cache.put(key, algo);
          have = true;
          ++report.timed;
        } else {
          cache.erase(key);
        }
      }
      if (have) tuned_[ShapeKey{s.n, s.k, s.f32_out}][m] = algo;
      cublasLtMatrixLayoutDestroy(p.a);
      cublasLtMatrixLayoutDestroy(p.b);
      cublasLtMatrixLayoutDestroy(p.c);
      cublasLtMatmulDescDestroy(p.op);
    }
  }
  check_cuda(cudaStreamSynchronize(stream), "GEMM tuning");
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

void Gemm::run(const void* x, const void* w, void* y, int64_t m, int64_t n, int64_t k, bool f32_out, bool accumulate,
               cudaStream_t stream) {
  if (m == 0) return;
  const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;
  const Plan& p = plan(m, n, k, f32_out);
  check_cublas(cublasLtMatmul(handle_, p.op, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.c, &p.algo, workspace_.get(),
                              workspace_.bytes(), stream),
               "cublasLtMatmul");
}

void Gemm::linear(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int64_t m, int64_t n, int64_t k,
                  cudaStream_t stream) {
  run(x, w, y, m, n, k, false, false, stream);
}

void Gemm::linear_f32_out(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n, int64_t k,
                          cudaStream_t stream) {
  run(x, w, y, m, n, k, true, false, stream);
}

void Gemm::linear_add_f32(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, int64_t m, int64_t n, int64_t k,
                          cudaStream_t stream) {
  run(x, w, y, m, n, k, true, true, stream);
}

}  // namespace zinfer::gpu::cuda
