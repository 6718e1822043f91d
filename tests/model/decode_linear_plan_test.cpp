// The start-up choice of GEMV or cuBLASLt per decode linear layer (gpu/decode_linear_plan.h),
// tested on its decisions with step timings made up for the purpose.
#include "gpu/decode_linear_plan.h"

#include <gtest/gtest.h>

#include <map>

namespace zinfer::gpu {
namespace {

const LinearShape kQkv{LinearOp::kNormLinear, 6144, 4096};
const LinearShape kO{LinearOp::kLinearResidual, 4096, 4096};
const LinearShape kGateUp{LinearOp::kNormGatedLinear, 28672, 4096};
const LinearShape kDown{LinearOp::kLinearResidual, 4096, 14336};

// A step's time: a fixed part plus each shape's time on the way the plan runs it.
struct MadeUpStep {
  std::map<LinearShape, std::pair<double, double>> gemv_gemm;  // seconds on the GEMV, on cuBLASLt
  int calls = 0;
  double operator()(const std::set<LinearShape>& gemm) {
    ++calls;
    double t = 1e-3;
    for (const auto& [shape, times] : gemv_gemm) t += gemm.count(shape) != 0 ? times.second : times.first;
    return t;
  }
};

TEST(DecodeLinearPlan, MovesExactlyTheShapesThatAreFasterOnCublasLt) {
  // The two-row figures of an H200 (µs per layer x 32 layers): the GEMV wins qkv and o.
  MadeUpStep step{{{kQkv, {19.0e-6 * 32, 20.4e-6 * 32}},
                   {kO, {11.7e-6 * 32, 13.4e-6 * 32}},
                   {kGateUp, {74.2e-6 * 32, 67.0e-6 * 32}},
                   {kDown, {35.0e-6 * 32, 32.4e-6 * 32}}}};
  auto timer = [&](const std::set<LinearShape>& plan) { return step(plan); };
  const BucketChoice c = choose_bucket({kQkv, kO, kGateUp, kDown}, 0.005, timer);
  EXPECT_EQ(c.gemm, (std::set<LinearShape>{kGateUp, kDown}));
  EXPECT_NEAR(c.gemv_s, 1e-3 + (19.0 + 11.7 + 74.2 + 35.0) * 32e-6, 1e-12);
  EXPECT_NEAR(c.chosen_s, 1e-3 + (19.0 + 11.7 + 67.0 + 32.4) * 32e-6, 1e-12);
  EXPECT_EQ(step.calls, 5);
}

TEST(DecodeLinearPlan, KeepsTheGemvWhenCublasLtWinsByLessThanTheMargin) {
  // gate_up is 0.2% faster on cuBLASLt over the step: noise, not a reason to change kernels.
  MadeUpStep step{{{kQkv, {19e-6, 20e-6}}, {kGateUp, {74e-6, 74e-6 - 2.2e-6}}}};
  auto timer = [&](const std::set<LinearShape>& plan) { return step(plan); };
  EXPECT_TRUE(choose_bucket({kQkv, kGateUp}, 0.005, timer).gemm.empty());
  EXPECT_EQ(choose_bucket({kQkv, kGateUp}, 0.001, timer).gemm, (std::set<LinearShape>{kGateUp}));
}

TEST(DecodeLinearPlan, TriesAShapeListedTwiceOnce) {
  MadeUpStep step{{{kO, {11.7e-6, 13.4e-6}}}};
  auto timer = [&](const std::set<LinearShape>& plan) { return step(plan); };
  const BucketChoice c = choose_bucket({kO, kO, kO}, 0.005, timer);
  EXPECT_TRUE(c.gemm.empty());
  EXPECT_EQ(step.calls, 2);
  EXPECT_EQ(c.gemv_s, c.chosen_s);
}

TEST(DecodeLinearPlan, AnswersPerRowCount) {
  DecodeLinearPlan plan;
  EXPECT_TRUE(plan.gemv(kGateUp, 2));  // nothing chosen: the GEMV wherever it runs
  plan.set_gemm(2, {kGateUp, kDown});
  EXPECT_FALSE(plan.gemv(kGateUp, 2));
  EXPECT_FALSE(plan.gemv(kDown, 2));
  EXPECT_TRUE(plan.gemv(kQkv, 2));
  EXPECT_TRUE(plan.gemv(kGateUp, 1));  // another bucket keeps its own choice
  EXPECT_FALSE(plan.gemv(LinearShape{LinearOp::kNormGatedLinear, 28672, 4096}, 2));  // by value
  EXPECT_TRUE(plan.gemv(LinearShape{LinearOp::kNormLinear, 28672, 4096}, 2));  // the op is part of it
  EXPECT_EQ(plan.gemm(2).size(), 2u);
  EXPECT_TRUE(plan.gemm(1).empty());
}

TEST(DecodeLinearPlan, DescribesTheChoiceForTheLog) {
  EXPECT_EQ(kGateUp.describe(), "norm_gated_linear 28672x4096");
  BucketChoice c;
  c.gemm = {kDown};
  c.gemv_s = 5.08e-3, c.chosen_s = 4.98e-3;
  EXPECT_EQ(c.describe(2),
            "decode steps of 2 rows: cuBLASLt for linear_residual 4096x14336, the GEMV for the rest (layers of a step: "
            "5.080 ms with every layer on the GEMV, 4.980 ms as chosen)");
  EXPECT_EQ(BucketChoice{}.describe(1).substr(0, 55), "decode steps of 1 row: every linear layer on the GEMV (");
}

}  // namespace
}  // namespace zinfer::gpu
