// `--gpu measured`: how measured ceilings become a GpuSpec (the measurement itself needs a GPU and
// runs in tools/gpu/check.sh; here it is the mapping from figures to the spec).
#include <gtest/gtest.h>

#include <stdexcept>

#include "tools/bench/lib/measured_gpu.h"

namespace zinfer::bench {
namespace {

TEST(MeasuredGpu, DeviceNamesFindTheirChipInTheTable) {
  ASSERT_NE(table_entry_for_device("NVIDIA H200"), nullptr);
  EXPECT_EQ(table_entry_for_device("NVIDIA H200")->key, "h200");
  EXPECT_EQ(table_entry_for_device("NVIDIA H100 80GB HBM3")->key, "h100-sxm");
  EXPECT_EQ(table_entry_for_device("NVIDIA H100 PCIe")->key, "h100-pcie");
  EXPECT_EQ(table_entry_for_device("NVIDIA GeForce RTX 4090")->key, "rtx4090");
  EXPECT_EQ(table_entry_for_device("NVIDIA A100-SXM4-80GB")->key.substr(0, 4), "a100");
  EXPECT_EQ(table_entry_for_device("NVIDIA L40")->key, "l40");
  EXPECT_EQ(table_entry_for_device("Tesla T4"), nullptr);
  EXPECT_EQ(table_entry_for_device(""), nullptr);
}

TEST(MeasuredGpu, SpecTakesTheMeasuredFiguresAndTheSheetsEightBitRatio) {
  gpu::DeviceCeilings c;
  c.name = "NVIDIA H200";
  c.copy_gbps = 4161;
  c.bf16_tflops = 750;
  c.mem_gib = 139.8;
  const GpuSpec g = gpu_spec_from_ceilings(c);
  EXPECT_EQ(g.key, "measured");
  EXPECT_EQ(g.name, "NVIDIA H200 (measured)");
  EXPECT_DOUBLE_EQ(g.mem_bw_gbs, 4161);
  EXPECT_DOUBLE_EQ(g.bf16_tflops, 750);
  EXPECT_DOUBLE_EQ(g.mem_gib, 139.8);
  // The H200 sheet: 1978.9 fp8 / 989.4 bf16.
  EXPECT_NEAR(g.int8_tflops, 750 * 1978.9 / 989.4, 1e-9);
}

TEST(MeasuredGpu, UnknownChipAssumesNoEightBitSpeedUp) {
  gpu::DeviceCeilings c;
  c.name = "Tesla T4";
  c.copy_gbps = 250;
  c.bf16_tflops = 40;
  c.mem_gib = 15;
  EXPECT_DOUBLE_EQ(gpu_spec_from_ceilings(c).int8_tflops, 40);
}

#if !ZINFER_HAVE_CUDA
TEST(MeasuredGpu, ABuildWithoutCudaSaysSo) {
  EXPECT_THROW(measured_gpu_spec(), std::runtime_error);
}
#endif

}  // namespace
}  // namespace zinfer::bench
