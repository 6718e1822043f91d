// The fp8 section of zinfer-cuda-bench: FP8 W8A8 linear layers (gpu/cuda/fp8_linear.h, activation
// quantization included) against bf16 cuBLASLt on the same GPU in the same process, at
// Llama-3-8B's four layer shapes and M = 1 … 4096 rows, per-channel weight scales (the path
// Fp8Layers::path picks: the GEMV up to Fp8Layers::kGemvRows rows, the mma kernel up to
// Fp8Layers::kMmaRows rows, cuBLASLt's e4m3 GEMM with outer-vector scales above) and block-wise
// 128 x 128 ones (the same, cuBLASLt's block scaling above). Each time is a CUDA graph of back-to-back launches over enough copies of the weights
// (≥ 256 MB) that no launch finds its weights in L2.
// Lines: "FP8 <shape> m=<M> bf16_us <t> fp8_us <t> block_us <t> speedup <bf16 / fp8> <bf16 / block>",
// and where both kernels could run (kMmaRows < M ≤ 64), "FP8 <shape> m=<M> mma_us <t> block_mma_us
// <t>": the same layers on the mma kernel, the choice kMmaRows makes; where the GEMV runs (M ≤
// kGemvRows), "FP8 <shape> m=<M> quantize_mma_us <t> block_quantize_mma_us <t>": the same layers
// with the GEMV off (a quantization kernel, then the mma kernel), the choice kGemvRows makes.
// ZINFER_BENCH_SHAPES (e.g. "o,down") runs some of the shapes only, ZINFER_BENCH_ROWS (e.g. "1,8")
// some of the row counts.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/fp8_linear.h"
#include "gpu/cuda/fp8_mma.h"
#include "gpu/cuda/gemm.h"
#include "gpu/cuda/random_fill.h"
#include "tools/gpu/bench_common.h"

namespace zinfer::gpu::cuda::bench {
namespace {

// Random e4m3 codes (no NaN) and scales: any values time the same.
quant::Fp8Weight random_fp8(int n, int k, int group, std::mt19937& rng) {
  quant::Fp8Weight w;
  w.rows = n;
  w.cols = k;
  w.group = group;
  w.q.resize(size_t(n) * k);
  uint32_t state = rng();
  for (auto& code : w.q) {
    state = state * 1664525u + 1013904223u;
    code = static_cast<uint8_t>(state >> 24) & 0xF7;  // bit 3 clear: never S.1111.111
  }
  w.scale.assign(size_t(n) * w.groups(), 1e-3f);
  return w;
}

}  // namespace

void bench_fp8(const Ceilings& c) {
  struct Shape {
    const char* name;
    int n, k;
  };
  const Shape shapes[] = {{"qkv", 6144, 4096}, {"o", 4096, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};
  const std::vector<int> rows = bench_rows({1, 2, 4, 8, 16, 24, 32, 48, 64, 128, 512, 2048, 4096});
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  Gemm gemm;
  std::mt19937 rng(3);
  const char* only = std::getenv("ZINFER_BENCH_SHAPES");
  for (const Shape& s : shapes) {
    if (only != nullptr && ("," + std::string(only) + ",").find("," + std::string(s.name) + ",") == std::string::npos)
      continue;
    std::printf("FP8 %s: %d x %d\n", s.name, s.n, s.k);
    std::fflush(stdout);
    const size_t elems = static_cast<size_t>(s.n) * s.k;
    const int bf16_copies = std::max<int>(2, static_cast<int>((size_t{256} << 20) / (elems * 2) + 1));
    const int fp8_copies = std::max<int>(2, static_cast<int>((size_t{256} << 20) / elems + 1));
    DeviceBuffer w16(elems * 2 * bf16_copies, "fp8 bench bf16 weights");
    const int max_m = *std::max_element(rows.begin(), rows.end());
    DeviceBuffer x(size_t(max_m) * s.k * 2, "fp8 bench x"), y(size_t(max_m) * s.n * 2, "fp8 bench y");
    check_cuda(launch_fill_random_bf16(w16.as<__nv_bfloat16>(), static_cast<int64_t>(elems) * bf16_copies, 1, 0.f,
                                       0.02f, stream),
               "fill");
    check_cuda(launch_fill_random_bf16(x.as<__nv_bfloat16>(), int64_t{max_m} * s.k, 4, 0.f, 1.f, stream), "fill");
    Fp8Layers channel, block;
    for (int i = 0; i < fp8_copies; ++i) {
      channel.add(i, random_fp8(s.n, s.k, s.k, rng));
      block.add(i, random_fp8(s.n, s.k, 128, rng));
    }
    channel.prepare(max_m);
    block.prepare(max_m);
    for (int m : rows) {
      GemmTuningCache no_file("", "");
      gemm.tune({GemmShape{s.n, s.k, false, false, w16.as<__nv_bfloat16>(), m, {m}}}, no_file, stream);
      const double bf16 = graph_us(
          [&](int i) {
            gemm.linear(x.as<__nv_bfloat16>(), w16.as<__nv_bfloat16>() + elems * i, y.as<__nv_bfloat16>(), m, s.n,
                        s.k, stream);
          },
          bf16_copies, stream);
      auto fp8_us = [&](Fp8Layers& layers) {
        return graph_us(
            [&](int i) {
              layers.run(models::Linear{i}, x.as<__nv_bfloat16>(), m, {y.as<__nv_bfloat16>(), nullptr}, stream);
            },
            fp8_copies, stream);
      };
      const double fp8 = fp8_us(channel), blk = fp8_us(block);
      std::printf("FP8 %s m=%d bf16_us %.2f fp8_us %.2f block_us %.2f speedup %.2f %.2f\n", s.name, m, bf16, fp8, blk,
                  bf16 / fp8, bf16 / blk);
      if (m <= Fp8Layers::kGemvRows) {
        channel.set_gemv_rows(0);
        block.set_gemv_rows(0);
        const double mma = fp8_us(channel), block_mma = fp8_us(block);
        channel.set_gemv_rows(Fp8Layers::kGemvRows);
        block.set_gemv_rows(Fp8Layers::kGemvRows);
        std::printf("FP8 %s m=%d quantize_mma_us %.2f block_quantize_mma_us %.2f\n", s.name, m, mma, block_mma);
      }
      if (m > Fp8Layers::kMmaRows && m <= kFp8MmaMaxRows) {
        channel.set_mma_rows(kFp8MmaMaxRows);
        block.set_mma_rows(kFp8MmaMaxRows);
        const double mma = fp8_us(channel), block_mma = fp8_us(block);
        channel.set_mma_rows(Fp8Layers::kMmaRows);
        block.set_mma_rows(Fp8Layers::kMmaRows);
        std::printf("FP8 %s m=%d mma_us %.2f block_mma_us %.2f\n", s.name, m, mma, block_mma);
      }
      if (m == 1) {
        const double floor_us = (elems + s.n * 4.0) / (c.copy_gbps * 1e3);
        report(std::string("fp8_") + s.name + "_m1_x_floor", fp8 / floor_us, "x", floor_us, fp8 / floor_us);
      }
      std::fflush(stdout);
    }
  }
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

}  // namespace zinfer::gpu::cuda::bench
