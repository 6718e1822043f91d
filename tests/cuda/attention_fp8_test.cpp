// The attention kernels over an fp8 (e4m3) KV cache against float64 on the host: the paged
// problems of attention_test.cpp with K and V stored as e4m3(x / scale), the reference computing
// with code · scale. Decode (split-K on CUDA cores and the d64/d128 tensor-core kernels), both
// prefill kernels (mma.sync and Hopper wgmma), the rotary kernel's e4m3 writes, and the swap and
// copy-on-write of fp8 blocks. Odd batches, GQA, scattered blocks, windows, several splits.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "gpu/cuda/attention.h"
#include "gpu/cuda/kv_cache.h"
#include "gpu/cuda/qkv_rope.h"
#include "gpu/quant/fp8.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/paged_attention_problem.h"

namespace zinfer::gpu::cuda::test {
namespace {

// Scales that put the problem's N(0, 1) K/V values in e4m3's normal range (codes up to ~100),
// neither 1 nor a power of two, so that a kernel that dropped one would be far off.
constexpr float kKScale = 0.0371f, kVScale = 0.0293f;

std::vector<__nv_fp8_e4m3> encode(const std::vector<float>& x, float scale) {
  std::vector<__nv_fp8_e4m3> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i].__x = quant::float_to_e4m3(x[i] / scale);
  return out;
}

// p with K and V replaced by what an fp8 cache gives back (code · scale), and the codes.
struct Fp8Problem {
  Problem p;
  std::vector<__nv_fp8_e4m3> k8, v8;
};

Fp8Problem quantized(Problem p) {
  Fp8Problem f;
  f.k8 = encode(p.k, kKScale);
  f.v8 = encode(p.v, kVScale);
  for (size_t i = 0; i < p.k.size(); ++i) {
    p.k[i] = quant::e4m3_to_float(f.k8[i].__x) * kKScale;
    p.v[i] = quant::e4m3_to_float(f.v8[i].__x) * kVScale;
  }
  f.p = std::move(p);
  return f;
}

// DeviceProblem with the fp8 cache in place of the bf16 one.
struct DeviceFp8Problem {
  explicit DeviceFp8Problem(const Fp8Problem& f) : dp(f.p), k8(f.k8), v8(f.v8) {
    dp.kv.k_cache = nullptr;
    dp.kv.v_cache = nullptr;
    dp.kv.k_cache8 = k8.get();
    dp.kv.v_cache8 = v8.get();
    dp.kv.k_scale = kKScale;
    dp.kv.v_scale = kVScale;
  }
  DeviceProblem dp;
  DeviceArray<__nv_fp8_e4m3> k8, v8;
};

const std::vector<SeqSpec> kBatch = {{0, 97}, {54, 17}, {130, 1}, {16, 64}, {7, 1}, {200, 129}};

// The problems are only a test of the fp8 path if rounding K/V to e4m3 changes the answer by more
// than the kernels' tolerance (else a kernel reading the bf16 values would pass too).
TEST(CudaFp8Attention, RoundingToE4m3ChangesTheReference) {
  const Problem p = make_problem(8, 2, 128, kBatch, 3);
  const Fp8Problem f = quantized(p);
  const std::vector<double> exact = reference(p), rounded = reference(f.p);
  EXPECT_GT(relative_error(std::vector<float>(rounded.begin(), rounded.end()), exact), 2e-2);
}

// Every decode kernel: 128 and 64 run on tensor cores, the others (16, 24 padded, 40 padded, 256)
// split-K on CUDA cores; splits 1, 3 and 32; block sizes 16, 8 and 12 (not a power of two);
// windows (48 keys: not a whole number of the tensor-core kernel's 32-key tiles).
TEST(CudaFp8Attention, DecodeMatchesFloat64) {
  ZINFER_REQUIRE_CUDA();
  struct Shape {
    int Hq, Hkv, D, bs, window;
  };
  for (const Shape& s : {Shape{8, 2, 128, 16, 0}, Shape{12, 1, 64, 16, 0}, Shape{7, 1, 128, 8, 0},
                         Shape{32, 2, 128, 32, 0}, Shape{8, 2, 128, 12, 0}, Shape{12, 1, 64, 12, 0}, Shape{4, 4, 16, 16, 0}, Shape{4, 2, 24, 16, 0},
                         Shape{6, 3, 40, 16, 0}, Shape{2, 1, 256, 16, 0}, Shape{8, 2, 128, 16, 48},
                         Shape{4, 1, 16, 16, 17}}) {
    const Fp8Problem f = quantized(make_problem(s.Hq, s.Hkv, s.D, kBatch, 29 + s.D + s.Hq + s.bs, s.window, s.bs));
    DeviceFp8Problem d(f);
    std::vector<int32_t> tokens(f.p.T);
    std::iota(tokens.begin(), tokens.end(), 0);
    std::reverse(tokens.begin(), tokens.end());
    DeviceArray<int32_t> d_tokens(tokens);
    const std::vector<double> ref = reference(f.p);
    for (int splits : {1, 3, 32}) {
      SplitWorkspace ws(f.p, splits);
      d.dp.out.poison();
      check_cuda(launch_decode_attention(d.dp.kv, ws.work(d_tokens.get(), f.p.T), nullptr), "fp8 decode attention");
      EXPECT_LT(relative_error(to_float(d.dp.out.download()), ref), 4e-3)
          << "Hq " << s.Hq << " Hkv " << s.Hkv << " D " << s.D << " block " << s.bs << " window " << s.window
          << " splits " << splits;
    }
  }
}

// Both prefill kernels: the Hopper one (head dim 128, power-of-two blocks), and mma.sync for head
// dim 64 and, called by name, for 128; with and without a window, block sizes 16, 64 and 8.
TEST(CudaFp8Attention, PrefillMatchesFloat64) {
  ZINFER_REQUIRE_CUDA();
  struct Shape {
    int Hq, Hkv, D, bs, window;
  };
  for (const Shape& s : {Shape{8, 2, 128, 16, 0}, Shape{12, 3, 128, 64, 0}, Shape{6, 6, 64, 16, 0},
                         Shape{8, 2, 128, 8, 100}, Shape{4, 2, 64, 16, 17}}) {
    const Fp8Problem f = quantized(make_problem(s.Hq, s.Hkv, s.D, kBatch, 41 + s.D + s.Hq + s.bs, s.window, s.bs));
    DeviceFp8Problem d(f);
    const std::vector<double> ref = reference(f.p);
    const int32_t num_tiles = static_cast<int32_t>(f.p.tiles.size() / 3);
    auto run = [&](auto launch, const char* what) {
      d.dp.out.poison();
      check_cuda(launch(d.dp.kv, d.dp.tiles.get(), num_tiles, nullptr), what);
      EXPECT_LT(relative_error(to_float(d.dp.out.download()), ref), 1e-2)
          << what << ": Hq " << s.Hq << " Hkv " << s.Hkv << " D " << s.D << " block " << s.bs << " window "
          << s.window;
    };
    run(launch_prefill_attention, "dispatch");
    run(launch_prefill_attention_mma, "mma.sync");
    if (prefill_attention_sm90_supports(d.dp.kv)) run(launch_prefill_attention_sm90, "sm90");
  }
}

// A launch with both caches or neither is refused.
TEST(CudaFp8Attention, OneCachePairOnly) {
  ZINFER_REQUIRE_CUDA();
  const Fp8Problem f = quantized(make_problem(4, 2, 64, {{0, 5}}, 7));
  DeviceFp8Problem d(f);
  PagedKv both = d.dp.kv;
  both.k_cache = d.dp.k.get();
  both.v_cache = d.dp.v.get();
  DeviceArray<int32_t> tokens(std::vector<int32_t>{0});
  const DecodeWork work{tokens.get(), 1, 1, nullptr, nullptr, nullptr};
  EXPECT_EQ(launch_decode_attention(both, work, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(launch_prefill_attention(both, d.dp.tiles.get(), 1, nullptr), cudaErrorInvalidValue);
  PagedKv neither = d.dp.kv;
  neither.k_cache8 = nullptr;
  neither.v_cache8 = nullptr;
  EXPECT_EQ(launch_decode_attention(neither, work, nullptr), cudaErrorInvalidValue);
}

// The rotary kernel stores e4m3(x / scale) of the value it computed in float32 (here the identity
// rotation of bf16 inputs, so the value is the input): the codes the host's encoder gives, bit
// for bit, with saturation at ±448 for values past 448 · scale.
TEST(CudaFp8Attention, RotaryKernelWritesE4m3Codes) {
  ZINFER_REQUIRE_CUDA();
  const int T = 37, Hq = 6, Hkv = 2, D = 64, width = (Hq + 2 * Hkv) * D, blocks = 5, bs = 16;
  std::mt19937 rng(5);
  std::vector<float> qkv = random_floats(static_cast<size_t>(T) * width, rng, 4.f);
  qkv[Hq * D] = 40.f;  // past 448 · kKScale = 16.6: saturates
  qkv[(Hq + Hkv) * D + 1] = -50.f;
  for (float& x : qkv) x = round_bf16(x);
  std::vector<int32_t> positions(T), slots(T);
  std::iota(positions.begin(), positions.end(), 0);
  for (int t = 0; t < T; ++t) slots[t] = (t * 7) % (blocks * bs);
  DeviceArray<__nv_bfloat16> d_qkv(to_bf16(qkv)), q(static_cast<size_t>(T) * Hq * D);
  DeviceArray<float> inv_freq(std::vector<float>(D / 2, 0.f));
  DeviceArray<int32_t> d_positions(positions), d_slots(slots);
  const size_t cache = static_cast<size_t>(blocks) * bs * Hkv * D;
  DeviceArray<__nv_fp8_e4m3> k8(cache), v8(cache);
  k8.poison();
  v8.poison();
  QkvRopeParams rp;
  rp.qkv = d_qkv.get(), rp.inv_freq = inv_freq.get(), rp.positions = d_positions.get();
  rp.slot_mapping = d_slots.get(), rp.q_out = q.get(), rp.k_cache8 = k8.get(), rp.v_cache8 = v8.get();
  rp.k_scale = kKScale, rp.v_scale = kVScale;
  rp.num_tokens = T, rp.num_heads = Hq, rp.num_kv_heads = Hkv, rp.head_dim = D;
  check_cuda(launch_qkv_rope(rp, nullptr), "qkv rope into fp8");
  const std::vector<__nv_fp8_e4m3> k = k8.download(), v = v8.download();
  int mismatches = 0;
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < Hkv * D; ++i) {
      const size_t at = static_cast<size_t>(slots[t]) * Hkv * D + i;
      const float kx = qkv[static_cast<size_t>(t) * width + Hq * D + i];
      const float vx = qkv[static_cast<size_t>(t) * width + (Hq + Hkv) * D + i];
      mismatches += k[at].__x != quant::float_to_e4m3(kx / kKScale);
      mismatches += v[at].__x != quant::float_to_e4m3(vx / kVScale);
    }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(quant::e4m3_to_float(k[static_cast<size_t>(slots[0]) * Hkv * D].__x), 448.f);
  EXPECT_EQ(quant::e4m3_to_float(v[static_cast<size_t>(slots[0]) * Hkv * D + 1].__x), -448.f);
}

// An fp8 block is half a bf16 block's bytes: swap-out, swap-in and copy-on-write move exactly its
// bytes, every layer's K and V, and nothing of the neighbouring blocks.
TEST(CudaFp8KvCache, SwapAndCopyMoveWholeFp8Blocks) {
  ZINFER_REQUIRE_CUDA();
  KvGeometry g{3, 16, 2, 64, 1};
  EXPECT_EQ(g.block_bytes(), 16u * 2 * 64);
  KvCache cache(g, 6, 4, {0.5f, 1.f, 2.f}, {0.25f, 1.f, 4.f});
  EXPECT_EQ(cache.k(0), nullptr);
  EXPECT_EQ(cache.k_scale(2), 2.f);
  EXPECT_EQ(cache.v_scale(0), 0.25f);
  const size_t layer_bytes = g.block_bytes() * 7;  // 6 blocks and the scratch block
  std::vector<uint8_t> pattern(layer_bytes);
  for (int l = 0; l < 3; ++l)
    for (int kv = 0; kv < 2; ++kv) {
      for (size_t i = 0; i < layer_bytes; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + l * 31 + kv * 101);
      check_cuda(cudaMemcpy(kv == 0 ? static_cast<void*>(cache.k8(l)) : static_cast<void*>(cache.v8(l)), pattern.data(),
                            layer_bytes, cudaMemcpyHostToDevice),
                 "fill");
    }
  auto device_block = [&](int l, int kv, int b) {
    std::vector<uint8_t> out(g.block_bytes());
    const auto* base = reinterpret_cast<const uint8_t*>(kv == 0 ? static_cast<void*>(cache.k8(l))
                                                                  : static_cast<void*>(cache.v8(l)));
    check_cuda(cudaMemcpy(out.data(), base + b * g.block_bytes(), g.block_bytes(), cudaMemcpyDeviceToHost), "read");
    return out;
  };
  std::vector<std::vector<uint8_t>> before;
  for (int l = 0; l < 3; ++l)
    for (int kv = 0; kv < 2; ++kv) before.push_back(device_block(l, kv, 2));
  cache.swap_out({{2, 3}}, nullptr);
  check_cuda(cudaDeviceSynchronize(), "sync");
  for (int l = 0; l < 3; ++l)
    for (int kv = 0; kv < 2; ++kv)
      EXPECT_EQ(0, std::memcmp(cache.host_block(l, kv, 3), before[l * 2 + kv].data(), g.block_bytes()))
          << "layer " << l << " kv " << kv;
  const std::vector<uint8_t> neighbour = device_block(1, 0, 5);
  cache.swap_in({{3, 4}}, nullptr);
  cache.copy({{4, 0}}, nullptr);
  for (int l = 0; l < 3; ++l)
    for (int kv = 0; kv < 2; ++kv) {
      EXPECT_EQ(device_block(l, kv, 4), before[l * 2 + kv]) << "swapped in, layer " << l << " kv " << kv;
      EXPECT_EQ(device_block(l, kv, 0), before[l * 2 + kv]) << "copied, layer " << l << " kv " << kv;
    }
  EXPECT_EQ(device_block(1, 0, 5), neighbour);
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
