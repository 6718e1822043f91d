// The w4 section of zinfer-cuda-bench: the W4A16 linear layer (gpu/cuda/w4_gemm.h, group 128)
// against bf16 cuBLASLt on the same GPU in the same process, at Llama-3-8B's four layer shapes and
// M = 1 … 8192 rows. Each time is a CUDA graph of back-to-back launches over enough copies of the
// weights (≥ 256 MB) that no launch finds its weights in L2, as in a model whose every layer has
// its own. Three ways are timed for the int4 layer: the tensor-core kernel straight from int4
// (M ≤ 64), the warpgroup kernel of many rows (any M, dequantizing in registers; its 128- and
// 256-row tiles of x), and dequantization to bf16 followed by cuBLASLt (any M).
// Lines: "W4 <shape> m=<M> bf16_us <t> w4_us <t> wide_us <t> wide256_us <t> dequant_gemm_us <t>
// speedup <bf16 / best>". ZINFER_BENCH_SHAPES (e.g. "qkv,down") and ZINFER_BENCH_ROWS (e.g.
// "1,16") run some of the shapes and row counts only.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/gemm.h"
#include "gpu/cuda/random_fill.h"
#include "gpu/cuda/w4_gemm.h"
#include "tools/gpu/bench_common.h"

namespace zinfer::gpu::cuda::bench {
void bench_w4(const Ceilings& c) {
  struct Shape {
    const char* name;
    int n, k;
  };
  const Shape shapes[] = {{"qkv", 6144, 4096}, {"o", 4096, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};
  const std::vector<int> rows = bench_rows({1, 2, 4, 8, 16, 32, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192});
  const char* only_shapes = std::getenv("ZINFER_BENCH_SHAPES");
  const int group = 128;
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  Gemm gemm;
  std::mt19937 rng(3);
  for (const Shape& s : shapes) {
    if (only_shapes != nullptr &&
        ("," + std::string(only_shapes) + ",").find("," + std::string(s.name) + ",") == std::string::npos)
      continue;
    const size_t elems = static_cast<size_t>(s.n) * s.k;
    const size_t w4_bytes = elems / 2, groups = s.k / group;
    const int bf16_copies = std::max<int>(2, static_cast<int>((size_t{256} << 20) / (elems * 2) + 1));
    const int w4_copies = std::max<int>(4, static_cast<int>((size_t{256} << 20) / w4_bytes + 1));
    DeviceBuffer w16(elems * 2 * bf16_copies, "w4 bench bf16 weights");
    DeviceBuffer words(w4_bytes * w4_copies, "w4 bench int4 weights");
    DeviceBuffer scales(groups * s.n * 4, "w4 bench scales"), zeros(groups * s.n * 4, "w4 bench zeros");
    DeviceBuffer dense(elems * 2, "w4 bench dequantized");
    const int max_m = *std::max_element(rows.begin(), rows.end());
    DeviceBuffer x(size_t(max_m) * s.k * 2, "w4 bench x"), y(size_t(max_m) * s.n * 2, "w4 bench y");
    check_cuda(launch_fill_random_bf16(w16.as<__nv_bfloat16>(), static_cast<int64_t>(elems) * bf16_copies, 1, 0.f,
                                       0.02f, stream),
               "fill");
    // Any bits are valid int4 words; bf16 noise is as good a source of them as any.
    check_cuda(launch_fill_random_bf16(words.as<__nv_bfloat16>(), static_cast<int64_t>(w4_bytes / 2) * w4_copies, 2,
                                       0.f, 1.f, stream),
               "fill");
    check_cuda(launch_fill_random_f32(scales.as<float>(), static_cast<int64_t>(groups * s.n), 3, 0.01f, 0.001f, stream),
               "fill");
    std::vector<uint32_t> z(groups * s.n);
    for (auto& v : z) {
      const uint32_t b = 0x4300u | (rng() & 0xFu);  // bf16(128 + zero), zero in 0..15
      v = b | b << 16;
    }
    check_cuda(cudaMemcpy(zeros.get(), z.data(), z.size() * 4, cudaMemcpyHostToDevice), "upload zeros");
    check_cuda(launch_fill_random_bf16(x.as<__nv_bfloat16>(), int64_t{max_m} * s.k, 4, 0.f, 1.f, stream), "fill");
    const size_t most_partials = w4_gemm_workspace_floats(kW4GemmMaxRows, s.n, s.k / 64);
    DeviceBuffer partials(most_partials * 4, "w4 bench partials"), counters(w4_gemm_counters(s.n) * 4, "w4 counters");
    check_cuda(cudaMemset(counters.get(), 0, counters.bytes()), "memset");
    size_t wide_floats = 1, wide_count = 1;
    for (int m : rows)
      for (int tokens : {128, 256}) {
        const int32_t splits = w4_gemm_wide_splits(m, s.n, s.k, tokens);
        wide_floats = std::max(wide_floats, w4_gemm_wide_workspace_floats(m, s.n, splits, tokens));
        wide_count = std::max(wide_count, w4_gemm_wide_counters(m, s.n, tokens));
      }
    DeviceBuffer wide_partials(wide_floats * 4, "w4 bench wide partials"), wide_counters(wide_count * 4, "w4 counters");
    check_cuda(cudaMemset(wide_counters.get(), 0, wide_counters.bytes()), "memset");
    auto layer = [&](int i) {
      W4Weight w;
      w.words = reinterpret_cast<const uint4*>(words.as<unsigned char>() + w4_bytes * i);
      w.scales = scales.as<float>();
      w.zeros = zeros.as<uint32_t>();
      w.n = s.n, w.k = s.k, w.group_size = group;
      return w;
    };
    for (int m : rows) {
      GemmTuningCache no_file("", "");
      gemm.tune({GemmShape{s.n, s.k, false, false, w16.as<__nv_bfloat16>(), m, {m}}}, no_file, stream);
      const double bf16 = graph_us(
          [&](int i) {
            gemm.linear(x.as<__nv_bfloat16>(), w16.as<__nv_bfloat16>() + elems * i, y.as<__nv_bfloat16>(), m, s.n,
                        s.k, stream);
          },
          bf16_copies, stream);
      // One launch of the int4 layer at copy i: the kernel of few rows (tokens 0) or the wide one.
      auto launch = [&](int i, int tokens) {
        W4GemmArgs a;
        a.w = layer(i);
        a.x = x.as<__nv_bfloat16>();
        a.y = y.as<__nv_bfloat16>();
        a.m = m;
        a.wide_tokens = tokens;
        a.partials = (tokens > 0 ? wide_partials : partials).as<float>();
        a.counters = (tokens > 0 ? wide_counters : counters).as<uint32_t>();
        check_cuda(tokens > 0 ? launch_w4_gemm_wide(a, stream) : launch_w4_gemm(a, stream), "w4 gemm");
      };
      auto w4_us = [&](int tokens) { return graph_us([&](int i) { launch(i, tokens); }, w4_copies, stream); };
      const double w4 = m <= kW4GemmMaxRows ? w4_us(0) : 0;
      const double wide = w4_us(128), wide256 = m > 64 ? w4_us(256) : 0;
      const double deq = graph_us(
          [&](int i) {
            check_cuda(launch_w4_dequantize(layer(i), dense.as<__nv_bfloat16>(), stream), "w4 dequantize");
            gemm.linear(x.as<__nv_bfloat16>(), dense.as<__nv_bfloat16>(), y.as<__nv_bfloat16>(), m, s.n, s.k, stream);
          },
          std::min(w4_copies, 8), stream);
      const double best = std::min({w4 > 0 ? w4 : deq, deq, wide, wide256 > 0 ? wide256 : wide});
      std::printf("W4 %s m=%d bf16_us %.2f w4_us %.2f wide_us %.2f wide256_us %.2f dequant_gemm_us %.2f speedup %.2f\n",
                  s.name, m, bf16, w4, wide, wide256, deq, bf16 / best);
      if (m == 1) {
        const double floor_us = (w4_bytes + groups * s.n * 8.0) / (c.copy_gbps * 1e3);
        report(std::string("w4_") + s.name + "_m1_x_floor", w4 / floor_us, "x", floor_us, w4 / floor_us);
      }
      std::fflush(stdout);
    }
  }
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

}  // namespace zinfer::gpu::cuda::bench
