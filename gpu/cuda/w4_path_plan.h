// Which way an int4 linear layer of more than 16 rows runs on the CUDA backend: the kernel of few
// rows (launch_w4_gemm, up to kW4GemmMaxRows), the wide kernel (launch_w4_gemm_wide: int4
// straight into warpgroup MMA) with 128- or 256-row tiles of x, or the layer dequantized to bf16
// then cuBLASLt (launch_w4_dequantize).
//
// Why measured: the wide kernel reads a quarter of the weight bytes and writes no bf16 copy, which
// wins while a step's weights cost more than its products, and from a few dozen rows on it also
// beats the kernel of few rows, whose warps each re-read all of x per 16 outputs (on an H200, up to a few hundred to
// a few thousand rows depending on the shape: docs/benchmarks/quantization.md); past that,
// cuBLASLt's bf16 GEMM is the faster tensor-core kernel. Which tile wins depends on how many
// tiles fill the GPU. Where the crossings lie depends on the shape and the GPU, so the backend
// times the three ways on each int4 shape at each row bucket the cuBLASLt tuning uses, once at
// start-up (never while serving). Every way agrees with the float64 reference of the layer
// (invariant I18; the wide kernel rounds the scale to bf16 first, as Marlin's bf16 path does).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <string>

namespace zinfer::gpu::cuda {

enum class W4Path : uint8_t { kFewRows, kWide128, kWide256, kDequantized };

class W4PathPlan {
 public:
  // An int4 layer's shape W [n, k] and whether its output is added into the residual.
  struct Shape {
    int64_t n = 0, k = 0;
    bool residual = false;
    auto operator<=>(const Shape&) const = default;
  };
  // Seconds of each way (indexed by W4Path) at one bucket; a way that cannot run the bucket
  // (the kernel of few rows past kW4GemmMaxRows) or was not timed: infinity.
  using Timing = std::array<double, 4>;

  void record(const Shape& shape, int64_t rows, const Timing& seconds);
  // The way a step of `rows` rows runs: the fastest at the smallest recorded bucket of at least
  // `rows` rows (the largest bucket's past them all; ties to the earlier way), never the kernel of
  // few rows past kW4GemmMaxRows (64) rows. Without a record: the kernel of few rows up to 64
  // rows, the wide kernel's 128-row tiles past.
  W4Path path(const Shape& shape, int64_t rows) const;
  // A line per shape for the start-up log: each bucket's way.
  std::string describe() const;

 private:
  std::map<Shape, std::map<int64_t, Timing>> timings_;
};

}  // namespace zinfer::gpu::cuda
