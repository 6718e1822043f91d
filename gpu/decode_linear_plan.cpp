#include "gpu/decode_linear_plan.h"

#include <cstdio>

namespace zinfer::gpu {

std::string LinearShape::describe() const {
  const char* name = op == LinearOp::kNormLinear        ? "norm_linear"
                     : op == LinearOp::kNormGatedLinear ? "norm_gated_linear"
                                                        : "linear_residual";
  return std::string(name) + " " + std::to_string(n) + "x" + std::to_string(k);
}

bool DecodeLinearPlan::gemv(const LinearShape& shape, int32_t rows) const {
  const auto it = gemm_.find(rows);
  return it == gemm_.end() || it->second.count(shape) == 0;
}

const std::set<LinearShape>& DecodeLinearPlan::gemm(int32_t rows) const {
  static const std::set<LinearShape> none;
  const auto it = gemm_.find(rows);
  return it == gemm_.end() ? none : it->second;
}

std::string BucketChoice::describe(int32_t rows) const {
  std::string moved;
  for (const LinearShape& s : gemm) moved += (moved.empty() ? "" : ", ") + s.describe();
  char times[128];
  std::snprintf(times, sizeof(times), " (layers of a step: %.3f ms with every layer on the GEMV, %.3f ms as chosen)",
                gemv_s * 1e3, chosen_s * 1e3);
  return "decode steps of " + std::to_string(rows) + (rows == 1 ? " row: " : " rows: ") +
         (moved.empty() ? std::string("every linear layer on the GEMV") : "cuBLASLt for " + moved + ", the GEMV for the rest") +
         times;
}

BucketChoice choose_bucket(const std::vector<LinearShape>& shapes, double margin,
                           const std::function<double(const std::set<LinearShape>&)>& step_seconds) {
  BucketChoice c;
  c.gemv_s = c.chosen_s = step_seconds(c.gemm);
  std::set<LinearShape> tried;
  for (const LinearShape& s : shapes) {
    if (!tried.insert(s).second) continue;  // a shape listed twice is tried once
    std::set<LinearShape> trial = c.gemm;
    trial.insert(s);
    const double t = step_seconds(trial);
    if (t < c.chosen_s * (1.0 - margin)) {
      c.gemm = std::move(trial);
      c.chosen_s = t;
    }
  }
  return c;
}

}  // namespace zinfer::gpu
