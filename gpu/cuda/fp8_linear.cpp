#include "gpu/cuda/fp8_linear.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/fp8_mma.h"
#include "gpu/cuda/rmsnorm.h"
#include "gpu/quant/fp8_parts.h"

namespace zinfer::gpu::cuda {
namespace {

// The float32 accumulator of one cuBLASLt product is at most this big; larger products run in
// chunks of rows (gate_up of an 8B model at 2,048 tokens would otherwise take 470 MB).
constexpr size_t kAccBytes = size_t{64} << 20;
constexpr size_t kLtWorkspace = size_t{32} << 20;

}  // namespace

Fp8Path Fp8Layers::path(int64_t rows, int64_t cols, int64_t group, int64_t M) {
  const bool mma = fp8_mma_supports(static_cast<int32_t>(rows), static_cast<int32_t>(cols), static_cast<int32_t>(group));
  const bool lt = lt_shape(rows, cols, group);
  if (mma && (M <= kFp8MmaMaxRows || !lt)) return Fp8Path::kMma;
  return lt ? Fp8Path::kCublasLt : Fp8Path::kDirect;
}

Fp8Layers::~Fp8Layers() {
  for (auto& [key, p] : plans_) {
    cublasLtMatrixLayoutDestroy(p.a);
    cublasLtMatrixLayoutDestroy(p.b);
    cublasLtMatrixLayoutDestroy(p.c);
    cublasLtMatmulDescDestroy(p.op);
  }
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

bool Fp8Layers::load(int32_t id, quant::CheckpointReader& reader, const std::vector<models::TensorPart>& parts) {
  const std::optional<quant::Fp8Weight> w = quant::read_fp8_linear(reader, parts);
  if (!w) return false;
  add(id, *w);
  return true;
}

void Fp8Layers::add(int32_t id, const quant::Fp8Weight& w) {
  if (max_rows_ > 0) throw std::logic_error("an fp8 layer was added after the fp8 workspaces were allocated");
  Layer l;
  l.rows = static_cast<int32_t>(w.rows);
  l.cols = static_cast<int32_t>(w.cols);
  l.group = static_cast<int32_t>(w.group);
  l.groups = static_cast<int32_t>(w.groups());
  l.static_scale = w.activation == quant::ActivationScheme::kStatic ? w.input_scale : 0.f;
  l.q = DeviceBuffer(w.q.size(), "fp8 weights");
  l.scale = DeviceBuffer(w.scale.size() * sizeof(float), "fp8 weight scales");
  check_cuda(cudaMemcpy(l.q.get(), w.q.data(), w.q.size(), cudaMemcpyHostToDevice), "upload of fp8 weights");
  check_cuda(cudaMemcpy(l.scale.get(), w.scale.data(), w.scale.size() * sizeof(float), cudaMemcpyHostToDevice),
             "upload of fp8 weight scales");
  layers_[id] = std::move(l);
}

void Fp8Layers::prepare(int64_t max_rows) {
  if (layers_.empty() || max_rows_ > 0) return;
  max_rows_ = max_rows;
  int64_t max_k = 0, max_n = 0, max_groups = 0;
  size_t partial_floats = 0, counters = 0;
  const int32_t mma_rows = static_cast<int32_t>(std::min<int64_t>(max_rows, kFp8MmaMaxRows));
  for (const auto& [id, l] : layers_) {
    max_k = std::max<int64_t>(max_k, l.cols);
    max_groups = std::max<int64_t>(max_groups, l.groups);
    if (lt_eligible(l)) max_n = std::max<int64_t>(max_n, l.rows);
    if (!fp8_mma_supports(l.rows, l.cols, l.group)) continue;
    counters = std::max(counters, fp8_mma_counters(l.rows));
    for (int32_t m = 1; m <= mma_rows; m = m < 8 ? 8 : 2 * m) {  // one row count per instantiation
      const int32_t rows = std::min(m, mma_rows);
      partial_floats = std::max(partial_floats, fp8_mma_workspace_floats(rows, l.rows, fp8_mma_splits(rows, l.rows, l.cols)));
    }
  }
  x_q_ = DeviceBuffer(static_cast<size_t>(max_rows * max_k), "fp8 activations");
  s_x_ = DeviceBuffer(static_cast<size_t>(max_rows * max_groups) * sizeof(float), "fp8 activation scales");
  if (counters > 0) {
    x_f16_ = DeviceBuffer(static_cast<size_t>(mma_rows * max_k) * sizeof(__half), "fp8 activations (f16)");
    mma_partials_ = DeviceBuffer(std::max<size_t>(partial_floats, 1) * sizeof(float), "fp8 split-K partials");
    mma_counters_ = DeviceBuffer(counters * sizeof(uint32_t), "fp8 split-K counters");
    check_cuda(cudaMemset(mma_counters_.get(), 0, mma_counters_.bytes()), "zeroing the fp8 split-K counters");
  }
  if (max_n > 0) {
    acc_rows_ = std::clamp<int64_t>(static_cast<int64_t>(kAccBytes / (max_n * sizeof(float))), 1, max_rows);
    acc_ = DeviceBuffer(static_cast<size_t>(acc_rows_ * max_n) * sizeof(float), "fp8 GEMM accumulator");
    lt_workspace_ = DeviceBuffer(kLtWorkspace, "fp8 cuBLASLt workspace");
    check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
  }
}

// As gemm.cpp lays out the bf16 product: column-major yᵀ[n, m] = W[n, k] · xᵀ[k, m], A = W
// transposed (the "TN" form cuBLASLt's FP8 GEMM requires), B = x.
const Fp8Layers::Plan& Fp8Layers::plan(int64_t m, int64_t n, int64_t k) {
  const auto key = std::make_tuple(m, n, k);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  Plan p;
  check_cublas(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate (fp8)");
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)),
               "set TRANSA (fp8)");
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)),
               "set TRANSB (fp8)");
  check_cublas(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, k, n, k), "layout A (fp8)");
  check_cublas(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, k, m, k), "layout B (fp8)");
  check_cublas(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, n, m, n), "layout C (fp8)");
  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate (fp8)");
  const size_t ws = lt_workspace_.bytes();
  check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "set workspace preference (fp8)");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.c, p.c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  p.ok = status == CUBLAS_STATUS_SUCCESS && found > 0;
  if (p.ok) p.algo = result.algo;
  return plans_.emplace(key, p).first->second;
}

Fp8Layers::Layer& Fp8Layers::layer_for(models::Linear w, int32_t M) {
  if (M > max_rows_) throw std::logic_error("an fp8 product of " + std::to_string(M) + " rows, past the prepared " +
                                            std::to_string(max_rows_));
  return layers_.at(w.id);
}

void Fp8Layers::run(models::Linear w, const __nv_bfloat16* x, int32_t M, Fp8Output out, cudaStream_t stream) {
  if (M == 0) return;
  Layer& l = layer_for(w, M);
  const Fp8Path route = path(l.rows, l.cols, l.group, M);
  if (route == Fp8Path::kMma) {
    // Above 64 rows (block-wise layers, which cuBLASLt's GEMM does not take) in pieces of 64 rows,
    // each reading the weights again: slower than one GEMM, far faster than the direct kernel.
    for (int32_t m0 = 0; m0 < M; m0 += kFp8MmaMaxRows) {
      const int32_t rows = std::min(kFp8MmaMaxRows, M - m0);
      check_cuda(launch_fp8_quantize(x + static_cast<size_t>(m0) * l.cols, rows, l.cols, l.group, l.static_scale,
                                     nullptr, s_x_.as<float>(), stream, x_f16_.as<__half>()),
                 "fp8 activation quantize");
      mma(l, m0, rows, out, stream);
    }
    return;
  }
  check_cuda(launch_fp8_quantize(x, M, l.cols, l.group, l.static_scale, x_q_.as<__nv_fp8_e4m3>(), s_x_.as<float>(),
                                 stream),
             "fp8 activation quantize");
  product(l, route, M, out, stream);
}

void Fp8Layers::run_normed(models::Linear w, const float* residual, const float* norm_weight, float eps,
                           __nv_bfloat16* normed, int32_t M, Fp8Output out, cudaStream_t stream) {
  if (M == 0) return;
  Layer& l = layer_for(w, M);
  const Fp8Path route = path(l.rows, l.cols, l.group, M);
  // One group per row (the mma kernel then takes up to 64 rows in one launch, path() says): one
  // block sees the row's whole group. Block-wise layers normalize first.
  const bool mma_once = route == Fp8Path::kMma;
  if (l.groups != 1) {
    check_cuda(launch_rmsnorm(residual, norm_weight, normed, M, l.cols, eps, stream), "rmsnorm");
    return run(w, normed, M, out, stream);
  }
  check_cuda(launch_fp8_norm_quantize(residual, norm_weight, eps, M, l.cols, l.static_scale,
                                      mma_once ? nullptr : x_q_.as<__nv_fp8_e4m3>(), s_x_.as<float>(), stream,
                                      mma_once ? x_f16_.as<__half>() : nullptr),
             "rmsnorm + fp8 activation quantize");
  if (mma_once) mma(l, 0, M, out, stream);
  else product(l, route, M, out, stream);
}

// Rows [m0, m0 + rows) of the product on the mma kernel, their x_q (f16) and s_x staged at row 0.
void Fp8Layers::mma(const Layer& l, int32_t m0, int32_t rows, Fp8Output out, cudaStream_t stream) {
  Fp8MmaArgs a;
  a.w = l.q.as<__nv_fp8_e4m3>();
  a.s_w = l.scale.as<float>();
  a.x = x_f16_.as<__half>();
  a.s_x = s_x_.as<float>();
  a.m = rows;
  a.n = l.rows;
  a.k = l.cols;
  a.group = l.group;
  a.out = out;
  if (a.out.bf16) a.out.bf16 += static_cast<size_t>(m0) * l.rows;
  if (a.out.add_f32) a.out.add_f32 += static_cast<size_t>(m0) * l.rows;
  a.partials = mma_partials_.as<float>();
  a.counters = mma_counters_.as<uint32_t>();
  check_cuda(launch_fp8_mma(a, stream), "fp8 mma");
}

// The product of M rows whose e4m3 codes and scales are in x_q_ and s_x_: cuBLASLt or the direct
// kernel.
void Fp8Layers::product(const Layer& l, Fp8Path route, int32_t M, Fp8Output out, cudaStream_t stream) {
  auto* x_q = x_q_.as<__nv_fp8_e4m3>();
  auto* s_x = s_x_.as<float>();
  const auto* w_q = l.q.as<__nv_fp8_e4m3>();
  const auto* s_w = l.scale.as<float>();
  // cuBLASLt when it has an algorithm for both chunk sizes (checked before anything is written:
  // a chunk added into the residual must not be added twice by a fallback).
  const int32_t chunk = static_cast<int32_t>(std::min<int64_t>(acc_rows_, M));
  const bool lt = route == Fp8Path::kCublasLt && handle_ != nullptr && plan(chunk, l.rows, l.cols).ok &&
                  (M % chunk == 0 || plan(M % chunk, l.rows, l.cols).ok);
  if (lt) {
    const float alpha = 1.f, beta = 0.f;
    for (int32_t m0 = 0; m0 < M; m0 += chunk) {
      const int32_t rows = std::min(chunk, M - m0);
      const Plan& p = plan(rows, l.rows, l.cols);
      check_cublas(cublasLtMatmul(handle_, p.op, &alpha, w_q, p.a, x_q + static_cast<size_t>(m0) * l.cols, p.b, &beta,
                                  acc_.get(), p.c, acc_.get(), p.c, &p.algo, lt_workspace_.get(),
                                  lt_workspace_.bytes(), stream),
                   "cublasLtMatmul (fp8)");
      Fp8Output part = out;
      if (part.bf16) part.bf16 += static_cast<size_t>(m0) * l.rows;
      if (part.add_f32) part.add_f32 += static_cast<size_t>(m0) * l.rows;
      check_cuda(launch_fp8_scale_epilogue(acc_.as<float>(), s_x + m0, s_w, rows, l.rows, part, stream),
                 "fp8 scale epilogue");
    }
    return;
  }
  check_cuda(launch_fp8_gemm_direct(x_q, s_x, w_q, s_w, M, l.rows, l.cols, l.group, out, stream), "fp8 gemm");
}

size_t Fp8Layers::bytes() const {
  size_t n = x_q_.bytes() + s_x_.bytes() + acc_.bytes() + lt_workspace_.bytes() + x_f16_.bytes() +
             mma_partials_.bytes() + mma_counters_.bytes();
  for (const auto& [id, l] : layers_) n += l.q.bytes() + l.scale.bytes();
  return n;
}

}  // namespace zinfer::gpu::cuda
