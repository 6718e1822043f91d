// The CUDA backend's FP8 W8A8 linear layers (gpu/quant/fp8.h): weights kept as e4m3 on the device
// with float32 scales [N, groups], activations quantized per step (fp8_kernels.h), and the product
//   - for one row (decode of one sequence), on the GEMV of fp8/fp8_gemv.h, which
//     quantizes x itself (from x, rmsnorm(residual) or silu(gate) · up) and streams the weights
//     at HBM speed (N a multiple of 8, K of 64 up to 16,384, one group or groups of 128);
//   - for up to kMmaRows rows (decode), on the mma kernel of fp8_mma.h, which reads the weights
//     once at HBM speed (N a multiple of 16, K of 64, one group or groups of a multiple of 64); it
//     takes up to 64 rows where cuBLASLt does not take the layer;
//   - for more rows, on cuBLASLt's e4m3 GEMM (Hopper, cuBLAS 12.9+), which applies the scales
//     itself and writes bf16 or adds into the float32 residual (beta 1), K and N multiples of 16:
//     one scale group per row as outer vectors (s_w[n] · s_x[m]); block-wise 128 x 128 weights
//     (the rows of each 128-row block sharing their scales) as 128 x 128 blocks against 1 x 128
//     activation groups, for rows in fours (its rule), the last 1-3 rows on the mma kernel;
//     other block-wise layers on the mma kernel 64 rows at a time;
//   - otherwise (shapes none takes, or a cuBLASLt without an algorithm) on the direct kernel.
// CudaWeightStore owns one; the ops call run() for a layer that has() it (cuda_ops.cpp).
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/fp8/fp8_gemv.h"
#include "gpu/cuda/fp8_kernels.h"
#include "gpu/models/weight_store.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/quant/fp8.h"

namespace zinfer::gpu::cuda {

// Which kernel computes a layer's product of M rows (the policy the list above describes).
enum class Fp8Path { kGemv, kMma, kCublasLt, kDirect };

class Fp8Layers {
 public:
  // The most rows the mma kernel computes where cuBLASLt takes the layer too: from 17 rows on the
  // mma kernel, which holds every row's accumulators per 16 outputs and re-reads x from shared
  // memory per warp, falls behind cuBLASLt (zinfer-cuda-bench fp8, docs/benchmarks/quantization.md).
  static constexpr int32_t kMmaRows = 16;
  // The most rows the GEMV computes (kFp8GemvMaxRows).
  static constexpr int32_t kGemvRows = kFp8GemvMaxRows;
  // square_blocks: group 128 and the rows of each 128-row block share their scales. mma_rows: as
  // kMmaRows (1 … kFp8MmaMaxRows); gemv_rows: as kGemvRows (0: never the GEMV).
  static Fp8Path path(int64_t rows, int64_t cols, int64_t group, int64_t M, bool square_blocks = false,
                      int32_t mma_rows = kMmaRows, int32_t gemv_rows = kGemvRows);
  static bool square_blocks(const quant::Fp8Weight& w);

  Fp8Layers() = default;
  ~Fp8Layers();
  Fp8Layers(const Fp8Layers&) = delete;
  Fp8Layers& operator=(const Fp8Layers&) = delete;

  // Reads linear layer `id` (its parts, as declared to the store) as an FP8 layer when the
  // checkpoint stores it in fp8 or online FP8 quantizes it, and uploads it; false when it is dense.
  bool load(int32_t id, quant::CheckpointReader& reader, const std::vector<models::TensorPart>& parts);
  // An FP8 layer already in the one host form (tests).
  void add(int32_t id, const quant::Fp8Weight& w);
  bool has(models::Linear w) const { return layers_.count(w.id) > 0; }
  bool empty() const { return layers_.empty(); }
  int32_t size() const { return static_cast<int32_t>(layers_.size()); }
  // Workspaces for steps of up to max_rows rows: once, before the first run and any graph capture.
  void prepare(int64_t max_rows);
  // y = W8A8(x) for x bf16 [M, K] into `out` (bf16 [M, N], or added into float32 [M, N]).
  void run(models::Linear w, const __nv_bfloat16* x, int32_t M, Fp8Output out, cudaStream_t stream);
  // The same for x = rmsnorm(residual) (rmsnorm.h): for a layer of one scale group per row one
  // kernel normalizes and quantizes (a launch fewer in every decode step); otherwise the RMSNorm
  // kernel writes x into `normed` ([M, K] bf16) and run() follows.
  void run_normed(models::Linear w, const float* residual, const float* norm_weight, float eps,
                  __nv_bfloat16* normed, int32_t M, Fp8Output out, cudaStream_t stream);
  // The same for x = silu(gate) · up, the gated MLP's activation of gate_up ([M, 2 K] bf16,
  // silu_mul.h): where the product reads codes (cuBLASLt, the mma kernel) one kernel activates and
  // quantizes, and x is never written; otherwise silu_mul writes x into `activated` ([M, K] bf16)
  // and run() follows.
  void run_gated(models::Linear w, const __nv_bfloat16* gate_up, __nv_bfloat16* activated, int32_t M, Fp8Output out,
                 cudaStream_t stream);
  size_t bytes() const;
  // Moves the rows up to which the mma kernel runs (kMmaRows) for this object's layers: the
  // benchmark times both kernels at the same rows with it.
  void set_mma_rows(int32_t rows);
  // Moves the rows up to which the GEMV runs (kGemvRows; 0: never): the benchmark times the GEMV
  // against the quantization and mma kernels at the same rows with it.
  void set_gemv_rows(int32_t rows);
  // Products cuBLASLt has computed (tests: the path that ran is the one path() picks).
  int64_t lt_products() const { return lt_products_; }

 private:
  struct Layer {
    DeviceBuffer q;      // [N, K] e4m3
    DeviceBuffer scale;  // [N, groups] float32
    DeviceBuffer block_scale;  // square blocks: [ceil(N / 128), groups rounded up to 4], cuBLASLt's order
    int32_t rows = 0, cols = 0, group = 0, groups = 0;
    bool square_blocks = false;
    float static_scale = 0;  // 0: dynamic
  };
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool ok = false;  // cuBLASLt has an algorithm: else the mma or direct kernel
  };
  Layer& layer_for(models::Linear w, int32_t M);
  Fp8Path route(const Layer& l, int32_t M) const {
    return path(l.rows, l.cols, l.group, M, l.square_blocks, mma_rows_, gemv_rows_);
  }
  // The product on the GEMV, x from `input` (fp8_gemv.h).
  void gemv(const Layer& l, Fp8GemvInput input, const __nv_bfloat16* x, const float* residual,
            const float* norm_weight, float eps, int32_t M, Fp8Output out, cudaStream_t stream);
  // Whether the mma kernel computes all M rows in one launch (from codes quantized once).
  bool mma_once(const Layer& l, int32_t M) const;
  // The order of s_x that cuBLASLt's scale mode for the layer takes.
  static Fp8ScaleOrder lt_order(const Layer& l) {
    return l.square_blocks ? Fp8ScaleOrder::kByGroup : Fp8ScaleOrder::kByRow;
  }
  // Rows [m0, m0 + rows) of x (bf16 [M, K]) on the mma kernel, 64 at a time, or the direct kernel.
  void small(const Layer& l, const __nv_bfloat16* x, int32_t m0, int32_t rows, Fp8Output out, cudaStream_t stream);
  void mma(const Layer& l, int32_t m0, int32_t rows, Fp8Output out, cudaStream_t stream);
  void direct(const Layer& l, int32_t M, Fp8Output out, cudaStream_t stream);
  // The rows of x_q_ / s_x_ (quantized in the order cuBLASLt's scale mode takes) on cuBLASLt.
  void lt_product(const Layer& l, const Plan& p, Fp8Output out, cudaStream_t stream);
  const Plan& plan(int64_t m, int64_t n, int64_t k, bool square_blocks, bool out_f32);
  // The plan of a product of M rows that runs on cuBLASLt; null where it does not (path(), or no
  // handle or algorithm).
  const Plan* lt_plan(const Layer& l, int32_t M, Fp8Output out);
  // Rows cuBLASLt computes of M (block scaling takes them in fours).
  static int32_t lt_rows(const Layer& l, int32_t M) { return l.square_blocks ? M & ~3 : M; }
  // cuBLASLt's e4m3 GEMM takes K, N multiples of 16 and the scales as above. Its float32 sums
  // differ from exact ones by up to about 3e-4 relative (Hopper's e4m3 tensor cores keep fewer
  // accumulator bits than float32; measured on an H200), a tenth of the bf16 rounding of the
  // layer's output: the price of its throughput at many rows, as in every FP8 GEMM on Hopper.
  static bool lt_shape(int64_t rows, int64_t cols, int64_t group, bool square_blocks) {
    return (group == cols || square_blocks) && rows % 16 == 0 && cols % 16 == 0;
  }

  std::map<int32_t, Layer> layers_;
  int64_t max_rows_ = 0, lt_products_ = 0;
  int32_t mma_rows_ = kMmaRows;
  int32_t gemv_rows_ = kGemvRows;
  bool warned_ = false;  // that cuBLASLt lacks an algorithm, once
  DeviceBuffer x_q_, s_x_, lt_workspace_;
  DeviceBuffer x_f16_;                       // [min(max_rows, 64), max K]: x_q widened for the mma kernel
  DeviceBuffer mma_partials_, mma_counters_;  // its split-K workspace (counters zero between launches)
  cublasLtHandle_t handle_ = nullptr;
  std::map<std::tuple<int64_t, int64_t, int64_t, bool, bool>, Plan> plans_;
};

}  // namespace zinfer::gpu::cuda
