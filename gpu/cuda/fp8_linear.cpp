#include "gpu/cuda/fp8_linear.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpu/cuda/cuda_check.h"
#include "gpu/cuda/fp8_mma.h"
#include "gpu/cuda/rmsnorm.h"
#include "gpu/cuda/silu_mul.h"
#include "gpu/quant/fp8_parts.h"

namespace zinfer::gpu::cuda {
namespace {

constexpr size_t kLtWorkspace = size_t{32} << 20;
constexpr int64_t kBlock = 128;  // cuBLASLt's block scaling: 1 x 128 activation groups, 128 x 128 weight blocks

// Rows m0... of an output of n columns.
Fp8Output rows_from(Fp8Output out, int32_t m0, int32_t n) {
  if (out.bf16) out.bf16 += static_cast<size_t>(m0) * n;
  if (out.add_f32) out.add_f32 += static_cast<size_t>(m0) * n;
  return out;
}

}  // namespace

Fp8Path Fp8Layers::path(int64_t rows, int64_t cols, int64_t group, int64_t M, bool square_blocks, int32_t mma_rows,
                        int32_t gemv_rows) {
  if (M <= gemv_rows && fp8_gemv_supports(static_cast<int32_t>(M), static_cast<int32_t>(rows),
                                          static_cast<int32_t>(cols), static_cast<int32_t>(group)))
    return Fp8Path::kGemv;
  const bool mma = fp8_mma_supports(static_cast<int32_t>(rows), static_cast<int32_t>(cols), static_cast<int32_t>(group));
  // Block scaling computes rows in fours: fewer than four rows would all be the mma kernel's.
  const bool lt = lt_shape(rows, cols, group, square_blocks) && (!square_blocks || M >= 4);
  if (mma && (M <= mma_rows || !lt)) return Fp8Path::kMma;  // past 64 rows, 64 at a time
  return lt ? Fp8Path::kCublasLt : Fp8Path::kDirect;
}

bool Fp8Layers::square_blocks(const quant::Fp8Weight& w) {
  const int64_t G = w.groups();
  if (w.group != kBlock || G < 2) return false;
  for (int64_t n = 0; n < w.rows; ++n)
    for (int64_t g = 0; g < G; ++g)
      if (w.scale_at(n, g) != w.scale_at(n / kBlock * kBlock, g)) return false;
  return true;
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
  l.square_blocks = square_blocks(w);
  if (l.square_blocks) {
    // cuBLASLt's 128 x 128 weight scales: the blocks of a 128-row block contiguous, their count
    // padded to a multiple of 4 (an order measured on an H200 against the other candidates).
    const int64_t row_blocks = (w.rows + kBlock - 1) / kBlock, stride = (l.groups + 3) / 4 * 4;
    std::vector<float> blocks(static_cast<size_t>(row_blocks * stride), 0.f);
    for (int64_t b = 0; b < row_blocks; ++b)
      for (int64_t g = 0; g < l.groups; ++g) blocks[static_cast<size_t>(b * stride + g)] = w.scale_at(b * kBlock, g);
    l.block_scale = DeviceBuffer(blocks.size() * sizeof(float), "fp8 block scales");
    check_cuda(cudaMemcpy(l.block_scale.get(), blocks.data(), blocks.size() * sizeof(float), cudaMemcpyHostToDevice),
               "upload of fp8 block scales");
  }
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
  int64_t max_k = 0, max_groups = 0;
  bool lt = false;
  size_t partial_floats = 0, counters = 0;
  const int32_t mma_rows = static_cast<int32_t>(std::min<int64_t>(max_rows, kFp8MmaMaxRows));
  for (const auto& [id, l] : layers_) {
    max_k = std::max<int64_t>(max_k, l.cols);
    max_groups = std::max<int64_t>(max_groups, l.groups);
    lt = lt || lt_shape(l.rows, l.cols, l.group, l.square_blocks);
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
  if (lt) {
    lt_workspace_ = DeviceBuffer(kLtWorkspace, "fp8 cuBLASLt workspace");
    check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
  }
}

// As gemm.cpp lays out the bf16 product: column-major yᵀ[n, m] = W[n, k] · xᵀ[k, m], A = W
// transposed (the "TN" form cuBLASLt's FP8 GEMM requires), B = x. The scales ride on A and B
// (their pointers are set per call); C = D, bf16, or float32 with beta 1 to add into the residual.
const Fp8Layers::Plan& Fp8Layers::plan(int64_t m, int64_t n, int64_t k, bool square_blocks, bool out_f32) {
  const auto key = std::make_tuple(m, n, k, square_blocks, out_f32);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  Plan p;
  check_cublas(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate (fp8)");
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)),
               "set TRANSA (fp8)");
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)),
               "set TRANSB (fp8)");
  const int32_t a_mode = square_blocks ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                                       : CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  const int32_t b_mode = square_blocks ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
                                       : CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof(a_mode)),
               "set A_SCALE_MODE (fp8)");
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof(b_mode)),
               "set B_SCALE_MODE (fp8)");
  // Fast accumulation: the tensor cores' accumulator is not moved into float32 registers every few
  // k-blocks. Hopper's e4m3 MMA keeps fewer accumulator bits than float32 either way (fp8_linear.h);
  // the promotions cost issue slots at the long K of an 8B model's layers (docs/benchmarks/
  // quantization.md has the figures), and the per-channel scales are applied once at the end in
  // both modes. Block-wise plans keep the default: their scales change every 128 inputs.
  const int8_t fast_accumulation = square_blocks ? 0 : 1;
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulation,
                                              sizeof(fast_accumulation)),
               "set FAST_ACCUM (fp8)");
  // The heuristic refuses these scale modes without scale pointers: any device buffer stands in
  // until lt_product sets the layer's own.
  const void* stand_in = s_x_.get();
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &stand_in, sizeof(stand_in)),
               "set A_SCALE_POINTER (fp8)");
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &stand_in, sizeof(stand_in)),
               "set B_SCALE_POINTER (fp8)");
  check_cublas(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, k, n, k), "layout A (fp8)");
  check_cublas(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, k, m, k), "layout B (fp8)");
  check_cublas(cublasLtMatrixLayoutCreate(&p.c, out_f32 ? CUDA_R_32F : CUDA_R_16BF, n, m, n), "layout C (fp8)");
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
  if (!p.ok && !warned_)
    std::fprintf(stderr,
                 "zinfer cuda: cuBLASLt has no FP8 GEMM with %s scales for %lldx%lld at %lld rows (status %d); "
                 "such products run on the mma or direct kernel, far slower\n",
                 square_blocks ? "128 x 128 block" : "outer-vector", static_cast<long long>(n),
                 static_cast<long long>(k), static_cast<long long>(m), static_cast<int>(status));
  warned_ = warned_ || !p.ok;
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
  if (route(l, M) == Fp8Path::kGemv) return gemv(l, Fp8GemvInput::kBf16, x, nullptr, nullptr, 0.f, M, out, stream);
  const Plan* p = lt_plan(l, M, out);
  if (p == nullptr) return small(l, x, 0, M, out, stream);
  const int32_t lt_m = lt_rows(l, M);
  check_cuda(launch_fp8_quantize(x, lt_m, l.cols, l.group, l.static_scale, x_q_.as<__nv_fp8_e4m3>(), s_x_.as<float>(),
                                 stream, nullptr, lt_order(l)),
             "fp8 activation quantize");
  lt_product(l, *p, out, stream);
  if (lt_m < M) small(l, x, lt_m, M - lt_m, out, stream);
}

bool Fp8Layers::mma_once(const Layer& l, int32_t M) const {
  return route(l, M) == Fp8Path::kMma && M <= kFp8MmaMaxRows;
}

// The plan is looked up before anything is written: a product added into the residual must not
// be added twice by a fallback.
const Fp8Layers::Plan* Fp8Layers::lt_plan(const Layer& l, int32_t M, Fp8Output out) {
  if (route(l, M) != Fp8Path::kCublasLt || handle_ == nullptr) return nullptr;
  const Plan& p = plan(lt_rows(l, M), l.rows, l.cols, l.square_blocks, out.add_f32 != nullptr);
  return p.ok ? &p : nullptr;
}

void Fp8Layers::run_normed(models::Linear w, const float* residual, const float* norm_weight, float eps,
                           __nv_bfloat16* normed, int32_t M, Fp8Output out, cudaStream_t stream) {
  if (M == 0) return;
  Layer& l = layer_for(w, M);
  if (route(l, M) == Fp8Path::kGemv)
    return gemv(l, Fp8GemvInput::kNorm, nullptr, residual, norm_weight, eps, M, out, stream);
  // One group per row: one kernel normalizes and quantizes for the mma kernel (f16 codes, up to
  // 64 rows in one launch, path() says) or for cuBLASLt (e4m3 codes, a scale per row). Block-wise
  // layers and fallbacks normalize first.
  const bool once = mma_once(l, M);
  const Plan* lt = l.groups == 1 ? lt_plan(l, M, out) : nullptr;
  if (l.groups != 1 || !(once || lt != nullptr)) {
    check_cuda(launch_rmsnorm(residual, norm_weight, normed, M, l.cols, eps, stream), "rmsnorm");
    return run(w, normed, M, out, stream);
  }
  check_cuda(launch_fp8_norm_quantize(residual, norm_weight, eps, M, l.cols, l.static_scale,
                                      once ? nullptr : x_q_.as<__nv_fp8_e4m3>(), s_x_.as<float>(), stream,
                                      once ? x_f16_.as<__half>() : nullptr),
             "rmsnorm + fp8 activation quantize");
  if (once) mma(l, 0, M, out, stream);
  else lt_product(l, *lt, out, stream);
}

void Fp8Layers::run_gated(models::Linear w, const __nv_bfloat16* gate_up, __nv_bfloat16* activated, int32_t M,
                          Fp8Output out, cudaStream_t stream) {
  if (M == 0) return;
  Layer& l = layer_for(w, M);
  if (route(l, M) == Fp8Path::kGemv) return gemv(l, Fp8GemvInput::kGated, gate_up, nullptr, nullptr, 0.f, M, out, stream);
  const bool once = mma_once(l, M);
  const Plan* lt = once ? nullptr : lt_plan(l, M, out);
  if (!once && lt == nullptr) {
    check_cuda(launch_silu_mul(gate_up, activated, M, l.cols, stream), "silu mul");
    return run(w, activated, M, out, stream);
  }
  if (once) {
    check_cuda(launch_fp8_silu_mul_quantize(gate_up, M, l.cols, l.group, l.static_scale, nullptr, s_x_.as<float>(),
                                            stream, x_f16_.as<__half>()),
               "silu mul + fp8 activation quantize");
    return mma(l, 0, M, out, stream);
  }
  const int32_t lt_m = lt_rows(l, M);
  check_cuda(launch_fp8_silu_mul_quantize(gate_up, lt_m, l.cols, l.group, l.static_scale, x_q_.as<__nv_fp8_e4m3>(),
                                          s_x_.as<float>(), stream, nullptr, lt_order(l)),
             "silu mul + fp8 activation quantize");
  lt_product(l, *lt, out, stream);
  if (lt_m == M) return;
  // Block scaling's last 1-3 rows: activated, then on the mma kernel.
  const size_t first = static_cast<size_t>(lt_m) * l.cols;
  check_cuda(launch_silu_mul(gate_up + 2 * first, activated + first, M - lt_m, l.cols, stream), "silu mul");
  small(l, activated, lt_m, M - lt_m, out, stream);
}

void Fp8Layers::small(const Layer& l, const __nv_bfloat16* x, int32_t m0, int32_t rows, Fp8Output out,
                      cudaStream_t stream) {
  const __nv_bfloat16* first = x + static_cast<size_t>(m0) * l.cols;
  if (!fp8_mma_supports(l.rows, l.cols, l.group)) {
    check_cuda(launch_fp8_quantize(first, rows, l.cols, l.group, l.static_scale, x_q_.as<__nv_fp8_e4m3>(),
                                   s_x_.as<float>(), stream),
               "fp8 activation quantize");
    return direct(l, rows, rows_from(out, m0, l.rows), stream);
  }
  // In pieces of 64 rows (block-wise layers above 64 rows that cuBLASLt does not take), each
  // reading the weights again: slower than one GEMM, far faster than the direct kernel.
  for (int32_t r0 = 0; r0 < rows; r0 += kFp8MmaMaxRows) {
    const int32_t piece = std::min(kFp8MmaMaxRows, rows - r0);
    check_cuda(launch_fp8_quantize(first + static_cast<size_t>(r0) * l.cols, piece, l.cols, l.group, l.static_scale,
                                   nullptr, s_x_.as<float>(), stream, x_f16_.as<__half>()),
               "fp8 activation quantize");
    mma(l, m0 + r0, piece, out, stream);
  }
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
  a.out = rows_from(out, m0, l.rows);
  a.partials = mma_partials_.as<float>();
  a.counters = mma_counters_.as<uint32_t>();
  check_cuda(launch_fp8_mma(a, stream), "fp8 mma");
}

void Fp8Layers::gemv(const Layer& l, Fp8GemvInput input, const __nv_bfloat16* x, const float* residual,
                     const float* norm_weight, float eps, int32_t M, Fp8Output out, cudaStream_t stream) {
  Fp8GemvArgs a;
  a.input = input;
  a.x = x;
  a.residual = residual;
  a.norm_weight = norm_weight;
  a.eps = eps;
  a.w = l.q.as<__nv_fp8_e4m3>();
  a.s_w = l.scale.as<float>();
  a.m = M;
  a.n = l.rows;
  a.k = l.cols;
  a.group = l.group;
  a.static_scale = l.static_scale;
  a.out = out;
  check_cuda(launch_fp8_gemv(a, stream), "fp8 gemv");
}

void Fp8Layers::direct(const Layer& l, int32_t M, Fp8Output out, cudaStream_t stream) {
  check_cuda(launch_fp8_gemm_direct(x_q_.as<__nv_fp8_e4m3>(), s_x_.as<float>(), l.q.as<__nv_fp8_e4m3>(),
                                    l.scale.as<float>(), M, l.rows, l.cols, l.group, out, stream),
             "fp8 gemm");
}

void Fp8Layers::lt_product(const Layer& l, const Plan& p, Fp8Output out, cudaStream_t stream) {
  const void* a_scale = l.square_blocks ? l.block_scale.get() : l.scale.get();
  const void* b_scale = s_x_.get();
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale)),
               "set A_SCALE_POINTER (fp8)");
  check_cublas(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale)),
               "set B_SCALE_POINTER (fp8)");
  const float alpha = 1.f, beta = out.add_f32 != nullptr ? 1.f : 0.f;
  void* d = out.add_f32 != nullptr ? static_cast<void*>(out.add_f32) : static_cast<void*>(out.bf16);
  check_cublas(cublasLtMatmul(handle_, p.op, &alpha, l.q.get(), p.a, x_q_.get(), p.b, &beta, d, p.c, d, p.c, &p.algo,
                              lt_workspace_.get(), lt_workspace_.bytes(), stream),
               "cublasLtMatmul (fp8)");
  ++lt_products_;
}

void Fp8Layers::set_mma_rows(int32_t rows) {
  if (rows < 1 || rows > kFp8MmaMaxRows)
    throw std::invalid_argument("fp8 mma rows " + std::to_string(rows) + " outside 1.." + std::to_string(kFp8MmaMaxRows));
  mma_rows_ = rows;
}

void Fp8Layers::set_gemv_rows(int32_t rows) {
  if (rows < 0 || rows > kFp8GemvMaxRows)
    throw std::invalid_argument("fp8 gemv rows " + std::to_string(rows) + " outside 0.." + std::to_string(kFp8GemvMaxRows));
  gemv_rows_ = rows;
}

size_t Fp8Layers::bytes() const {
  size_t n = x_q_.bytes() + s_x_.bytes() + lt_workspace_.bytes() + x_f16_.bytes() +
             mma_partials_.bytes() + mma_counters_.bytes();
  for (const auto& [id, l] : layers_) n += l.q.bytes() + l.scale.bytes() + l.block_scale.bytes();
  return n;
}

}  // namespace zinfer::gpu::cuda
