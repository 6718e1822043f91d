// The prefill section of zinfer-cuda-bench: the kernels of a prefill layer that move activations
// rather than multiply by weights, at Llama-3-8B's shapes for 4,096 tokens (hidden 4,096, 32 query
// and 8 KV heads of 128, intermediate 14,336): their time against the copy rate for the bytes each
// reads and writes once. What a 4,096-token prefill pays beside its GEMMs and attention.
// Lines: "PREFILL <kernel> rows=<M> us <t> MB <bytes moved> GB/s <rate> of_copy <fraction>".
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "gpu/cuda/device_memory.h"
#include "gpu/cuda/fp8_kernels.h"
#include "gpu/cuda/qkv_rope.h"
#include "gpu/cuda/random_fill.h"
#include "gpu/cuda/rmsnorm.h"
#include "gpu/cuda/silu_mul.h"
#include "tools/gpu/bench_common.h"

namespace zinfer::gpu::cuda::bench {

void bench_prefill_kernels(const Ceilings& c) {
  constexpr int M = 4096, H = 4096, I = 14336, Hq = 32, Hkv = 8, D = 128, kBlock = 16;
  constexpr int QKV = (Hq + 2 * Hkv) * D;
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  DeviceBuffer residual(size_t(M) * H * 4, "residual"), norm(size_t(H) * 4, "norm weight");
  DeviceBuffer x(size_t(M) * H * 2, "x"), gate_up(size_t(M) * 2 * I * 2, "gate_up"), act(size_t(M) * I * 2, "act");
  DeviceBuffer x_q(size_t(M) * I, "x_q"), s_x(size_t(M) * (I / 128) * 4, "s_x");
  DeviceBuffer qkv(size_t(M) * QKV * 2, "qkv"), q(size_t(M) * Hq * D * 2, "q");
  DeviceBuffer k_cache(size_t(M) * Hkv * D * 2, "k cache"), v_cache(size_t(M) * Hkv * D * 2, "v cache");
  DeviceBuffer inv_freq(size_t(D / 2) * 4, "inv_freq"), positions(size_t(M) * 4, "positions"), slots(size_t(M) * 4, "slots");
  check_cuda(launch_fill_random_bf16(gate_up.as<__nv_bfloat16>(), int64_t{M} * 2 * I, 5, 0.f, 2.f, stream), "fill");
  check_cuda(launch_fill_random_bf16(x.as<__nv_bfloat16>(), int64_t{M} * H, 6, 0.f, 2.f, stream), "fill");
  check_cuda(launch_fill_random_bf16(qkv.as<__nv_bfloat16>(), int64_t{M} * QKV, 7, 0.f, 2.f, stream), "fill");
  std::vector<float> ones(size_t(M) * H, 1.5f), freq(D / 2);
  for (int i = 0; i < D / 2; ++i) freq[size_t(i)] = std::pow(500000.f, -2.f * i / D);
  std::vector<int32_t> pos(M), slot(M);
  std::iota(pos.begin(), pos.end(), 0);
  // The cache's blocks in a shuffled order, as a paged cache holds them.
  for (int t = 0; t < M; ++t) slot[size_t(t)] = ((t / kBlock) * 37 % (M / kBlock)) * kBlock + t % kBlock;
  check_cuda(cudaMemcpy(residual.get(), ones.data(), ones.size() * 4, cudaMemcpyHostToDevice), "upload");
  check_cuda(cudaMemcpy(norm.get(), ones.data(), size_t(H) * 4, cudaMemcpyHostToDevice), "upload");
  check_cuda(cudaMemcpy(inv_freq.get(), freq.data(), freq.size() * 4, cudaMemcpyHostToDevice), "upload");
  check_cuda(cudaMemcpy(positions.get(), pos.data(), pos.size() * 4, cudaMemcpyHostToDevice), "upload");
  check_cuda(cudaMemcpy(slots.get(), slot.data(), slot.size() * 4, cudaMemcpyHostToDevice), "upload");
  auto line = [&](const char* name, double bytes, const std::function<void()>& launch) {
    const double us = graph_us([&](int) { launch(); }, 4, stream);
    const double gbps = bytes / (us * 1e3);
    std::printf("PREFILL %s rows=%d us %.2f MB %.1f GB/s %.0f of_copy %.2f\n", name, M, us, bytes / 1e6, gbps,
                gbps / c.copy_gbps);
    std::fflush(stdout);
  };
  const double e = double(M) * H;  // elements of a hidden-size activation
  line("rmsnorm", e * (4 + 2), [&] {
    check_cuda(launch_rmsnorm(residual.as<float>(), norm.as<float>(), x.as<__nv_bfloat16>(), M, H, 1e-5f, stream), "rmsnorm");
  });
  line("fp8_norm_quantize", e * (4 + 1), [&] {
    check_cuda(launch_fp8_norm_quantize(residual.as<float>(), norm.as<float>(), 1e-5f, M, H, 0.f,
                                        x_q.as<__nv_fp8_e4m3>(), s_x.as<float>(), stream),
               "norm quantize");
  });
  line("fp8_quantize_row", e * (2 + 1), [&] {
    check_cuda(launch_fp8_quantize(x.as<__nv_bfloat16>(), M, H, H, 0.f, x_q.as<__nv_fp8_e4m3>(), s_x.as<float>(), stream),
               "quantize");
  });
  line("fp8_quantize_g128", e * (2 + 1), [&] {
    check_cuda(launch_fp8_quantize(x.as<__nv_bfloat16>(), M, H, 128, 0.f, x_q.as<__nv_fp8_e4m3>(), s_x.as<float>(),
                                   stream, nullptr, Fp8ScaleOrder::kByGroup),
               "quantize");
  });
  const double ei = double(M) * I;
  line("silu_mul", ei * (4 + 2), [&] {
    check_cuda(launch_silu_mul(gate_up.as<__nv_bfloat16>(), act.as<__nv_bfloat16>(), M, I, stream), "silu mul");
  });
  line("fp8_silu_mul_quantize_row", ei * (4 + 1), [&] {
    check_cuda(launch_fp8_silu_mul_quantize(gate_up.as<__nv_bfloat16>(), M, I, I, 0.f, x_q.as<__nv_fp8_e4m3>(),
                                            s_x.as<float>(), stream),
               "silu quantize");
  });
  line("fp8_silu_mul_quantize_g128", ei * (4 + 1), [&] {
    check_cuda(launch_fp8_silu_mul_quantize(gate_up.as<__nv_bfloat16>(), M, I, 128, 0.f, x_q.as<__nv_fp8_e4m3>(),
                                            s_x.as<float>(), stream, nullptr, Fp8ScaleOrder::kByGroup),
               "silu quantize");
  });
  QkvRopeParams rp;
  rp.qkv = qkv.as<__nv_bfloat16>();
  rp.inv_freq = inv_freq.as<float>();
  rp.positions = positions.as<int32_t>();
  rp.slot_mapping = slots.as<int32_t>();
  rp.q_out = q.as<__nv_bfloat16>();
  rp.k_cache = k_cache.as<__nv_bfloat16>();
  rp.v_cache = v_cache.as<__nv_bfloat16>();
  rp.num_tokens = M;
  rp.num_heads = Hq;
  rp.num_kv_heads = Hkv;
  rp.head_dim = D;
  line("qkv_rope", double(M) * QKV * 2 * 2, [&] { check_cuda(launch_qkv_rope(rp, stream), "qkv rope"); });
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

}  // namespace zinfer::gpu::cuda::bench
