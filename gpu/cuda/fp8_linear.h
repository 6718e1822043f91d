// The CUDA backend's FP8 W8A8 linear layers (gpu/quant/fp8.h): weights kept as e4m3 on the device
// with float32 scales [N, groups], activations quantized per step (fp8_kernels.h), and the product
//   - for up to 64 rows (decode), on the mma kernel of fp8_mma.h, which reads the weights once at
//     HBM speed (N a multiple of 16, K of 64, one group or groups of a multiple of 64);
//   - for more rows, on cuBLASLt's e4m3 GEMM (sm_89+: e4m3 x e4m3, float32 accumulation into a
//     float32 workspace, then the scale epilogue) for one scale group per row with K and N
//     multiples of 16; block-wise layers, which it does not take, on the mma kernel 64 rows at a
//     time;
//   - otherwise (shapes neither takes, or a cuBLASLt without an algorithm) on the direct kernel.
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
#include "gpu/cuda/fp8_kernels.h"
#include "gpu/models/weight_store.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/quant/fp8.h"

namespace zinfer::gpu::cuda {

// Which kernel computes a layer's product of M rows (the policy the list above describes).
enum class Fp8Path { kMma, kCublasLt, kDirect };

class Fp8Layers {
 public:
  static Fp8Path path(int64_t rows, int64_t cols, int64_t group, int64_t M);

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
  size_t bytes() const;

 private:
  struct Layer {
    DeviceBuffer q;      // [N, K] e4m3
    DeviceBuffer scale;  // [N, groups] float32
    int32_t rows = 0, cols = 0, group = 0, groups = 0;
    float static_scale = 0;  // 0: dynamic
  };
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool ok = false;  // cuBLASLt has an algorithm: else the direct kernel
  };
  Layer& layer_for(models::Linear w, int32_t M);
  void mma(const Layer& l, int32_t m0, int32_t rows, Fp8Output out, cudaStream_t stream);
  void product(const Layer& l, Fp8Path route, int32_t M, Fp8Output out, cudaStream_t stream);
  const Plan& plan(int64_t m, int64_t n, int64_t k);
  // cuBLASLt's e4m3 GEMM takes one scale group per row and K, N multiples of 16. Its float32 sums
  // differ from exact ones by up to about 3e-4 relative (Hopper's e4m3 tensor cores keep fewer
  // accumulator bits than float32; measured on an H200), a tenth of the bf16 rounding of the
  // layer's output: the price of its throughput at many rows, as in every FP8 GEMM on Hopper.
  static bool lt_eligible(const Layer& l) { return lt_shape(l.rows, l.cols, l.group); }
  static bool lt_shape(int64_t rows, int64_t cols, int64_t group) {
    return group == cols && rows % 16 == 0 && cols % 16 == 0;
  }

  std::map<int32_t, Layer> layers_;
  int64_t max_rows_ = 0, acc_rows_ = 0;
  DeviceBuffer x_q_, s_x_, acc_, lt_workspace_;
  DeviceBuffer x_f16_;                       // [min(max_rows, 64), max K]: x_q widened for the mma kernel
  DeviceBuffer mma_partials_, mma_counters_;  // its split-K workspace (counters zero between launches)
  cublasLtHandle_t handle_ = nullptr;
  std::map<std::tuple<int64_t, int64_t, int64_t>, Plan> plans_;
};

}  // namespace zinfer::gpu::cuda
