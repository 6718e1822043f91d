// The start-up choice of how int4 layers of many rows run (gpu/cuda/w4_path_plan.h), on its
// decisions: host code, no GPU needed.
#include <gtest/gtest.h>

#include <limits>

#include "gpu/cuda/w4_path_plan.h"

namespace zinfer::gpu::cuda::test {
namespace {

TEST(W4PathPlan, TakesTheFastestWayAtTheStepsBucket) {
  W4PathPlan plan;
  const W4PathPlan::Shape gate_up{28672, 4096, false}, down{4096, 14336, true};
  constexpr double kCannot = std::numeric_limits<double>::infinity();
  plan.record(gate_up, 16, {49e-6, 60e-6, kCannot, kCannot});
  plan.record(gate_up, 32, {100e-6, 61e-6, kCannot, kCannot});
  plan.record(gate_up, 128, {kCannot, 64e-6, 96e-6, 157e-6});
  plan.record(gate_up, 256, {kCannot, 132e-6, 106e-6, 184e-6});
  plan.record(gate_up, 1024, {kCannot, 531e-6, 410e-6, 400e-6});
  plan.record(down, 128, {kCannot, 47e-6, 78e-6, 89e-6});
  EXPECT_EQ(plan.path(gate_up, 1), W4Path::kFewRows);   // bucket 16
  EXPECT_EQ(plan.path(gate_up, 17), W4Path::kWide128);  // bucket 32
  EXPECT_EQ(plan.path(gate_up, 65), W4Path::kWide128);  // bucket 128
  EXPECT_EQ(plan.path(gate_up, 128), W4Path::kWide128);
  EXPECT_EQ(plan.path(gate_up, 129), W4Path::kWide256);      // bucket 256
  EXPECT_EQ(plan.path(gate_up, 300), W4Path::kDequantized);  // bucket 1024
  EXPECT_EQ(plan.path(gate_up, 5000), W4Path::kDequantized);  // past the largest bucket: its choice
  EXPECT_EQ(plan.path(down, 4000), W4Path::kWide128);
  // The output kind is part of the shape: a shape never timed runs the kernel of few rows up to
  // 64 rows, the wide kernel past.
  EXPECT_EQ(plan.path({28672, 4096, true}, 1024), W4Path::kWide128);
  EXPECT_EQ(plan.path({6144, 4096, false}, 8192), W4Path::kWide128);
  EXPECT_EQ(plan.path({6144, 4096, false}, 64), W4Path::kFewRows);
  // Past 64 rows never the kernel of few rows, even where the only bucket timed it fastest.
  plan.record({4096, 4096, false}, 64, {10e-6, 20e-6, kCannot, kCannot});
  EXPECT_EQ(plan.path({4096, 4096, false}, 40), W4Path::kFewRows);
  EXPECT_EQ(plan.path({4096, 4096, false}, 100), W4Path::kWide128);
}

TEST(W4PathPlan, TiesGoToTheFirstWay) {
  W4PathPlan plan;
  constexpr double kCannot = std::numeric_limits<double>::infinity();
  plan.record({4096, 4096, false}, 64, {30e-6, 30e-6, kCannot, kCannot});
  plan.record({4096, 4096, false}, 256, {kCannot, 40e-6, 31e-6, 31e-6});
  EXPECT_EQ(plan.path({4096, 4096, false}, 40), W4Path::kFewRows);
  EXPECT_EQ(plan.path({4096, 4096, false}, 200), W4Path::kWide256);
}

TEST(W4PathPlan, DescribesEachShapesBuckets) {
  W4PathPlan plan;
  constexpr double kCannot = std::numeric_limits<double>::infinity();
  plan.record({4096, 4096, true}, 64, {21e-6, 28e-6, kCannot, kCannot});
  plan.record({4096, 4096, true}, 128, {kCannot, 30e-6, 50e-6, 28e-6});
  EXPECT_EQ(plan.describe(),
            "int4 4096x4096 (into the residual), rows (us: few-rows/wide128/wide256/dequantized): 64 few-rows "
            "(21/28/-/-) 128 dequantized (-/30/50/28)\n");
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
