// Which linear layers of a small decode step run on the CUDA backend's fused GEMV (gemv.h) and
// which on RMSNorm + cuBLASLt (+ SiLU·mul), per decode bucket where the GEMV can run at all.
//
// Why measured: the GEMV streams the weights near the copy rate at one row, but from two rows its
// FMAs per weight grow with the rows, and which way is faster then depends on the layer's shape
// and the GPU (on an H200 at two rows the GEMV still wins qkv and o but loses gate_up and down to
// cuBLASLt, docs/benchmarks/gpu.md). Measured on whole decode steps, not on one kernel alone:
// the GEMVs start before their predecessor ends (programmatic launches) and a layer's kernel
// count changes with the choice, which a kernel's own time does not show.
//
// The choice is made once, at start-up (the CUDA backend's warm-up, before the decode graphs are
// captured): never while serving. Every choice computes the same function (invariant I18).
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace zinfer::gpu {

// The op a linear layer runs in (gpu/models/forward_ops.h).
enum class LinearOp : uint8_t { kNormLinear, kNormGatedLinear, kLinearResidual };

// A linear layer as the choice sees it: the op and W's shape [n, k]. Layers of the same op and
// shape (every transformer layer's qkv, say) share one choice.
struct LinearShape {
  LinearOp op = LinearOp::kNormLinear;
  int64_t n = 0, k = 0;
  auto operator<=>(const LinearShape&) const = default;
  std::string describe() const;  // e.g. "norm_gated_linear 28672x4096"
};

class DecodeLinearPlan {
 public:
  // Whether a step of `rows` rows runs `shape` on the GEMV: yes unless the plan moved it to
  // cuBLASLt for that row count.
  bool gemv(const LinearShape& shape, int32_t rows) const;
  void set_gemm(int32_t rows, std::set<LinearShape> shapes) { gemm_[rows] = std::move(shapes); }
  // The shapes a step of `rows` rows runs on cuBLASLt.
  const std::set<LinearShape>& gemm(int32_t rows) const;

 private:
  std::map<int32_t, std::set<LinearShape>> gemm_;
};

// One bucket's choice and what it was based on.
struct BucketChoice {
  std::set<LinearShape> gemm;  // the shapes moved to cuBLASLt
  double gemv_s = 0;           // a step with every shape on the GEMV
  double chosen_s = 0;         // a step as chosen
  std::string describe(int32_t rows) const;  // a line for the start-up log
};

// Greedy, in the order of `shapes` (the model's): starting with every shape on the GEMV, a shape
// moves to cuBLASLt when the step is then faster by more than `margin` (a fraction of the best
// step so far), so that timing noise does not flip choices. step_seconds(plan) times a step with
// the shapes of `plan` on cuBLASLt; it is called once more than there are distinct shapes.
BucketChoice choose_bucket(const std::vector<LinearShape>& shapes, double margin,
                           const std::function<double(const std::set<LinearShape>&)>& step_seconds);

}  // namespace zinfer::gpu
