// The gemv section of zinfer-cuda-bench: the skinny GEMM (gpu/cuda/gemv.h) at Llama-3-8B's linear
// shapes and 1, 2, 4, 8 rows, next to cuBLASLt on the same operands, as GB/s of weight bytes and
// the fraction of copy bandwidth. Each figure is a CUDA graph of back-to-back launches over enough
// copies of W (>= 128 MB) that no launch finds its weights in L2, as in a decode step where every
// layer has its own. "gemv_fused" is the variant the decode layers run (RMSNorm prologue,
// residual-add or SiLU·mul epilogue), "gemv_serial" the plain one without programmatic launch;
// all three run the kernel gemv_auto_streaming picks. Where the bulk-copy ring fits, "_ring" and
// "_registers" force each kernel on the same operands.
// First, "read_only_*": kernels that only read 1 GiB, by load kind (read_stream.cu).
// Last, "layer_gemvs": a whole decode layer's four fused projections (o, gate_up, down, then the
// next layer's qkv) back to back at 1 and 2 rows, the kernel boundaries of a decode step included.
#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/gemm.h"
#include "gpu/cuda/gemv.h"
#include "gpu/cuda/random_fill.h"
#include "tools/gpu/bench_common.h"
#include "tools/gpu/read_stream.h"

namespace zinfer::gpu::cuda::bench {
namespace {

struct LinearShape {
  const char* name;
  int n, k;
  bool fused;               // the decode layers run it as a GEMV (cuda_forward.cpp) with
  GemvInput fused_input;    // this prologue
  GemvOutput fused_output;  // and this epilogue
};

// A decode layer's linear layers (Llama-3-8B) over two copies of its weights (872 MB, no L2
// hits), launched as the decode step launches them.
void bench_layer_gemvs(const Ceilings& c, cudaStream_t stream) {
  const int H = 4096, A = 4096, I = 14336, QKV = 6144, copies = 2;
  const size_t o_elems = size_t{H} * A, gu_elems = size_t{2} * I * H, down_elems = size_t{H} * I,
               qkv_elems = size_t{QKV} * H, layer_elems = o_elems + gu_elems + down_elems + qkv_elems;
  const double layer_bytes = 2.0 * layer_elems;
  DeviceBuffer w(layer_elems * 2 * copies, "layer bench weights"), attn(size_t{2} * A * 2, "layer bench attn"),
      act(size_t{2} * I * 2, "layer bench act"), qkv(size_t{2} * QKV * 2, "layer bench qkv"),
      residual(size_t{2} * H * 4, "layer bench residual"), norm_w(size_t{H} * 4, "layer bench norm");
  check_cuda(launch_fill_random_bf16(w.as<__nv_bfloat16>(), static_cast<int64_t>(layer_elems) * copies, 31, 0.f,
                                     0.02f, stream),
             "fill");
  check_cuda(launch_fill_random_bf16(attn.as<__nv_bfloat16>(), int64_t{2} * A, 32, 0.f, 1.f, stream), "fill");
  check_cuda(launch_fill_random_f32(residual.as<float>(), int64_t{2} * H, 33, 0.f, 1.f, stream), "fill");
  check_cuda(launch_fill_random_f32(norm_w.as<float>(), H, 34, 1.f, 0.1f, stream), "fill");
  for (int m : {1, 2}) {
    auto layer = [&](int i) {
      const __nv_bfloat16* base = w.as<__nv_bfloat16>() + layer_elems * (i % copies);
      float* r = residual.as<float>();
      const float* nw = norm_w.as<float>();
      const float eps = 1e-6f;  // GemvArgs' default, as this benchmark always ran
      const GemvArgs o = residual_gemv_args(attn.as<__nv_bfloat16>(), base, r, m, H, A);
      const GemvArgs gu = normed_gemv_args(r, nw, eps, base + o_elems, act.as<__nv_bfloat16>(), GemvOutput::kSiluMul,
                                           m, 2 * I, H);
      const GemvArgs down = residual_gemv_args(act.as<__nv_bfloat16>(), base + o_elems + gu_elems, r, m, H, I);
      const GemvArgs q = normed_gemv_args(r, nw, eps, base + o_elems + gu_elems + down_elems,
                                          qkv.as<__nv_bfloat16>(), GemvOutput::kBf16, m, QKV, H);
      for (const GemvArgs& g : {o, gu, down, q}) check_cuda(launch_gemv(g, stream), "layer gemv");
    };
    const double ms = graph_ms_per_launch(layer, 8, stream);
    const double gbps = layer_bytes / (ms * 1e-3) / 1e9;
    report("layer_gemvs_llama3_8b_m" + std::to_string(m) + "_gbps", gbps, "GB/s", c.copy_gbps, gbps / c.copy_gbps);
  }
}

}  // namespace

void bench_gemv(const Ceilings& c) {
  const LinearShape shapes[] = {{"qkv", 6144, 4096, true, GemvInput::kRmsNorm, GemvOutput::kBf16},
                                {"o", 4096, 4096, true, GemvInput::kBf16, GemvOutput::kAddToResidual},
                                {"gate_up", 28672, 4096, true, GemvInput::kRmsNorm, GemvOutput::kSiluMul},
                                {"down", 4096, 14336, true, GemvInput::kBf16, GemvOutput::kAddToResidual},
                                {"lm_head", 128256, 4096, false, GemvInput::kBf16, GemvOutput::kBf16}};
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  // What a read-only stream reaches, by load kind: the rate the GEMVs below stream toward.
  for (const ReadStreamResult& r : read_stream_rates(size_t{1} << 30, stream)) {
    report("read_only_" + r.name + "_gbps", r.gbps, "GB/s", c.copy_gbps, r.gbps / c.copy_gbps);
  }
  Gemm gemm;
  for (const LinearShape& s : shapes) {
    const size_t elems = static_cast<size_t>(s.n) * s.k, bytes = elems * 2;
    const int copies = std::max<int>(4, static_cast<int>((size_t{128} << 20) / bytes + 1));
    DeviceBuffer w(bytes * copies, "gemv bench weights"), x(size_t{kGemvMaxRows} * s.k * 2, "gemv bench x"),
        y(size_t{kGemvMaxRows} * s.n * 2, "gemv bench y"), y32(size_t{kGemvMaxRows} * s.n * 4, "gemv bench y"),
        residual(size_t{kGemvMaxRows} * s.k * 4, "gemv bench residual"), norm_w(size_t(s.k) * 4, "gemv bench norm");
    check_cuda(launch_fill_random_bf16(w.as<__nv_bfloat16>(), static_cast<int64_t>(elems) * copies, 21, 0.f, 0.02f,
                                       stream),
               "fill");
    check_cuda(launch_fill_random_bf16(x.as<__nv_bfloat16>(), int64_t{kGemvMaxRows} * s.k, 22, 0.f, 1.f, stream),
               "fill");
    check_cuda(launch_fill_random_f32(residual.as<float>(), int64_t{kGemvMaxRows} * s.k, 23, 0.f, 1.f, stream), "fill");
    check_cuda(launch_fill_random_f32(norm_w.as<float>(), s.k, 24, 1.f, 0.1f, stream), "fill");
    check_cuda(cudaMemsetAsync(y32.get(), 0, y32.bytes(), stream), "memset");
    auto weights = [&](int i) { return w.as<__nv_bfloat16>() + elems * i; };
    for (int m : {1, 2, 4, 8}) {
      const std::string tag = std::string(s.name) + "_" + std::to_string(s.n) + "x" + std::to_string(s.k) + "_m" +
                              std::to_string(m);
      auto print = [&](const char* who, double ms) {
        const double gbps = bytes / (ms * 1e-3) / 1e9;
        report(std::string(who) + "_" + tag + "_gbps", gbps, "GB/s", c.copy_gbps, gbps / c.copy_gbps);
      };
      // cuBLASLt's algorithm is timed before the capture, as the backend does at start-up.
      GemmTuningCache no_file("", "");
      gemm.tune({GemmShape{s.n, s.k, false, false, weights(0), m, {m}}}, no_file, stream);
      auto cublas = [&](int i) {
        gemm.linear(x.as<__nv_bfloat16>(), weights(i), y.as<__nv_bfloat16>(), m, s.n, s.k, stream);
      };
      print("cublaslt", graph_ms_per_launch(cublas, copies, stream));
      if (!gemv_supports(m, s.k)) continue;
      auto gemv_ms = [&](GemvArgs g, bool programmatic) {
        auto launch = [&](int i) {
          g.w = weights(i);
          check_cuda(launch_gemv(g, stream, programmatic), "gemv");
        };
        return graph_ms_per_launch(launch, copies, stream);
      };
      GemvArgs plain;
      plain.x = x.as<__nv_bfloat16>();
      plain.y_bf16 = y.as<__nv_bfloat16>();
      plain.m = m, plain.n = s.n, plain.k = s.k;
      print("gemv", gemv_ms(plain, true));
      print("gemv_serial", gemv_ms(plain, false));  // what overlapping the next launch is worth
      const bool ring = gemv_ring_fits(m, s.k);  // then both kernels, whichever "gemv" chose
      auto forced = [](GemvArgs g, GemvStreaming streaming) {
        g.streaming = streaming;
        return g;
      };
      if (ring) print("gemv_ring", gemv_ms(forced(plain, GemvStreaming::kBulkRing), true));
      if (ring) print("gemv_registers", gemv_ms(forced(plain, GemvStreaming::kRegisters), true));
      if (!s.fused) continue;
      GemvArgs fused = plain;  // the variant the decode layers run, with its prologue / epilogue
      fused.input = s.fused_input;
      fused.output = s.fused_output;
      fused.norm_residual = residual.as<float>();
      fused.norm_weight = norm_w.as<float>();
      fused.residual_out = y32.as<float>();
      print("gemv_fused", gemv_ms(fused, true));
      if (ring) print("gemv_fused_ring", gemv_ms(forced(fused, GemvStreaming::kBulkRing), true));
      if (ring) print("gemv_fused_registers", gemv_ms(forced(fused, GemvStreaming::kRegisters), true));
    }
  }
  bench_layer_gemvs(c, stream);
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

}  // namespace zinfer::gpu::cuda::bench
