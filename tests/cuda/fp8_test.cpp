// FP8 W8A8 on the CUDA backend (gpu/cuda/fp8_linear.h) against the CPU backend's FP8 arithmetic
// (gpu/cpu/fp8_matrix.h, itself checked against numpy's float64 in tests/model/fp8_test.cpp):
//   - the activation quantization kernel gives the CPU's e4m3 codes and scales bit for bit;
//   - every layer of tests/data/models/fp8_cases (per-tensor / per-channel, static / dynamic,
//     block 128 x 128 with N, K not multiples of 128), per-channel layers cuBLASLt's e4m3 GEMM
//     takes (K, N multiples of 16, scales as outer vectors), block-wise layers on its 128 x 128
//     block scaling (rows in fours, the rest on the mma kernel) and layers the mma kernel takes
//     (fp8_mma.h: one group or block-wise, at every row-count instantiation and split), and the GEMV
//     of one row (fp8/fp8_gemv.h, quantizing x in its prologue), at M = 1 ... 200, with
//     bf16 output and added into a float32 residual, match the CPU within bf16 output rounding
//     (and, added in float32, within the accumulation error of the path Fp8Layers::path picks);
//   - every layer of tests/data/models/ct_fp8_cases (compressed-tensors float-quantized, read by
//     the checkpoint reader: per-tensor / per-channel / block, static / dynamic, fused q/k/v parts);
//   - the fp8 model fixtures (quant_method fp8 and compressed-tensors llama_ct_fp8) and online FP8
//     of llama_bf16 give the CPU backend's logits.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "gpu/backend.h"
#include "gpu/cpu/fp8_matrix.h"
#include "gpu/cuda/fp8/fp8_gemv.h"
#include "gpu/cuda/fp8_kernels.h"
#include "gpu/cuda/fp8_linear.h"
#include "gpu/cuda/fp8_mma.h"
#include "gpu/cuda/rmsnorm.h"
#include "gpu/cuda/silu_mul.h"
#include "gpu/quant/fp8.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/quant/fp8_checkpoint.h"
#include "gpu/quant/fp8_parts.h"
#include "gpu/safetensors.h"
#include "tests/cuda/cuda_test_util.h"

namespace zinfer::gpu::cuda::test {
namespace {

namespace fs = std::filesystem;
const fs::path kModels = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models";

// x rounded to bf16, as the CUDA backend's activations are.
std::vector<float> bf16_rounded(std::vector<float> x) {
  for (float& v : x) v = round_bf16(v);
  return x;
}

// The launch rule of the activation quantizations (host arithmetic: runs without a GPU), at the
// shapes that decide it, so that a launch cannot fall to a slower kernel without a test saying so.
TEST(CudaFp8, QuantizationLaunchRule) {
  using K = Fp8QuantizeKernel;
  const auto rule = fp8_quantize_launch;
  EXPECT_EQ(rule(4096, 4096, false, false), (Fp8QuantizeLaunch{K::kTwoPassScalar}));  // unaligned or K % 8
  EXPECT_EQ(rule(96, 32, true, false), (Fp8QuantizeLaunch{K::kLanes, 8}));
  EXPECT_EQ(rule(4096, 128, true, true), (Fp8QuantizeLaunch{K::kLanes, 16}));  // block-wise 1 x 128 groups
  EXPECT_EQ(rule(1000, 1000, true, false), (Fp8QuantizeLaunch{K::kLanes, 32}));
  // Whole rows of an 8B model: the o input (8 KB a row) and the gated down input (57 KB a row,
  // three in 200 KB), then a 70B model's gated row (114 KB), which the ring cannot hold twice.
  EXPECT_EQ(rule(4096, 4096, true, false), (Fp8QuantizeLaunch{K::kRing, 256, 2, 4}));
  EXPECT_EQ(rule(14336, 14336, true, true), (Fp8QuantizeLaunch{K::kRing, 1024, 2, 3}));
  EXPECT_EQ(rule(8000, 8000, true, false), (Fp8QuantizeLaunch{K::kRing, 512, 2, 4}));
  EXPECT_EQ(rule(28672, 28672, true, true), (Fp8QuantizeLaunch{K::kRow, 1024, 4}));
  EXPECT_EQ(rule(28672, 28672, true, false), (Fp8QuantizeLaunch{K::kRing, 1024, 4, 3}));
  // Several wide groups a row: the row kernel; wider than 32,768 inputs: two passes.
  EXPECT_EQ(rule(4096, 2048, true, false), (Fp8QuantizeLaunch{K::kRow, 256, 2}));
  EXPECT_EQ(rule(33000, 33000, true, false), (Fp8QuantizeLaunch{K::kTwoPassVectors}));
}

// The activation quantization kernels (lanes of a warp per group, a block per group held in
// registers, whole rows through a shared-memory ring, two passes, scalar) give the CPU's codes and
// scales bit for bit, with the f16 form of each code beside it.
TEST(CudaFp8, ActivationQuantizationIsTheCpus) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(5);
  for (const auto& [M, K, group, static_scale] :
       std::vector<std::tuple<int, int, int, float>>{
           {3, 96, 32, 0.f},        // 8 lanes per 32-input group, half of them idle
           {5, 64, 64, 0.01f},      // 8 lanes per row, static
           {17, 1024, 128, 0.f},    // 16 lanes per 128-input group
           {3, 200, 200, 0.f},      // a warp per row (16-byte loads)
           {4, 1000, 1000, 0.f},    // a warp's most inputs, the last vectors partial
           {2, 4096, 4096, 0.f},    // a block of 256 per row, two vectors per thread
           {3, 4096, 2048, 0.f},    // a block per 2,048-input group
           {2, 1032, 1032, 0.02f},  // a block per row, static, most threads one vector
           {2, 8000, 8000, 0.f},    // 512 threads
           {3, 14336, 14336, 0.f},  // 1,024 threads
           {2, 20000, 20000, 0.f},  // 1,024 threads, four vectors each
           {600, 16384, 16384, 0.f},     // the ring: more rows than a one-block-per-SM grid's stages hold,
           {700, 16384, 16384, 0.05f},   // so that every stage is refilled (static scale: no reduction)
           {3000, 4096, 2048, 0.f},      // many rows of a per-group scale: the row kernel, not the ring
           {1, 33000, 33000, 0.f},  // wider: two passes
           {17, 300, 128, 0.f},     // K not a multiple of 8: the scalar kernel
           {3, 1030, 1030, 0.f}}) {
    std::vector<float> x = bf16_rounded(random_floats(size_t(M) * K, rng, 2.f));
    std::fill(x.begin(), x.begin() + K, 0.f);  // a zero row
    DeviceArray<__nv_bfloat16> dx(to_bf16(x));
    DeviceArray<__nv_fp8_e4m3> dq(size_t(M) * K);
    DeviceArray<__half> dh(size_t(M) * K);
    const int G = (K + group - 1) / group;
    DeviceArray<float> ds(size_t(M) * G);
    check_cuda(launch_fp8_quantize(dx.get(), M, K, group, static_scale, dq.get(), ds.get(), nullptr, dh.get()),
               "quantize");
    const std::vector<__nv_fp8_e4m3> q = dq.download();
    const std::vector<__half> h = dh.download();
    for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(__half2float(h[i]), quant::e4m3_to_float(q[i].__x)) << i;
    const std::vector<float> s = ds.download();
    std::vector<float> want_q(x.size()), want_s(s.size());
    quant::quantize_activations(x.data(), M, K, group,
                                static_scale > 0 ? quant::ActivationScheme::kStatic : quant::ActivationScheme::kDynamic,
                                static_scale, want_q.data(), want_s.data());
    EXPECT_EQ(s, want_s);
    size_t differing = 0;
    for (size_t i = 0; i < q.size(); ++i) differing += quant::e4m3_to_float(q[i].__x) != want_q[i];
    EXPECT_EQ(differing, 0u) << "M " << M << " K " << K;
    // The same scales in cuBLASLt's block-scaling order, [groups, M].
    check_cuda(launch_fp8_quantize(dx.get(), M, K, group, static_scale, dq.get(), ds.get(), nullptr, nullptr,
                                   Fp8ScaleOrder::kByGroup),
               "quantize by group");
    const std::vector<float> by_group = ds.download();
    for (int m = 0; m < M; ++m)
      for (int g = 0; g < G; ++g) ASSERT_EQ(by_group[size_t(g) * M + m], want_s[size_t(m) * G + g]) << m << " " << g;
    const std::vector<__nv_fp8_e4m3> q_by_group = dq.download();  // the codes do not depend on the order
    EXPECT_EQ(std::memcmp(q_by_group.data(), q.data(), q.size()), 0);
  }
}

// silu(gate) · up quantized in one kernel gives the codes and scales of silu_mul's output quantized:
// the same bf16 activation for every kernel of the launch rule (lanes, registers, the ring with
// 450 rows of an 8B model's width, two passes, scalar), in both scale orders.
TEST(CudaFp8, GatedQuantizationIsSiluMulThenQuantization) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(29);
  for (const auto& [M, inter, group] : std::vector<std::tuple<int, int, int>>{
           {3, 1024, 128}, {5, 512, 512}, {2, 14336, 14336}, {450, 14336, 14336}, {2, 14336, 128},
           {1, 33000, 33000}, {3, 300, 100}}) {
    SCOPED_TRACE("M " + std::to_string(M) + " inter " + std::to_string(inter) + " group " + std::to_string(group));
    DeviceArray<__nv_bfloat16> gate_up(to_bf16(random_floats(size_t(M) * 2 * inter, rng, 4.f)));
    DeviceArray<__nv_bfloat16> act(size_t(M) * inter);
    const int G = (inter + group - 1) / group;
    DeviceArray<__nv_fp8_e4m3> want_q(size_t(M) * inter), got_q(size_t(M) * inter);
    DeviceArray<float> want_s(size_t(M) * G), got_s(size_t(M) * G);
    DeviceArray<__half> want_h(size_t(M) * inter), got_h(size_t(M) * inter);
    check_cuda(launch_silu_mul(gate_up.get(), act.get(), M, inter, nullptr), "silu mul");
    for (const Fp8ScaleOrder order : {Fp8ScaleOrder::kByRow, Fp8ScaleOrder::kByGroup}) {
      check_cuda(launch_fp8_quantize(act.get(), M, inter, group, 0.f, want_q.get(), want_s.get(), nullptr,
                                     want_h.get(), order),
                 "quantize");
      check_cuda(launch_fp8_silu_mul_quantize(gate_up.get(), M, inter, group, 0.f, got_q.get(), got_s.get(), nullptr,
                                              got_h.get(), order),
                 "silu mul + quantize");
      EXPECT_EQ(got_s.download(), want_s.download());
      const std::vector<__nv_fp8_e4m3> w = want_q.download(), g = got_q.download();
      EXPECT_EQ(std::memcmp(w.data(), g.data(), w.size()), 0);
      const std::vector<__half> wh = want_h.download(), gh = got_h.download();
      EXPECT_EQ(std::memcmp(wh.data(), gh.data(), wh.size() * sizeof(__half)), 0);
    }
  }
}

// The fused RMSNorm + quantization against the RMSNorm kernel followed by the quantization kernel:
// the same scales and codes, but for the rare value whose bf16 rounding an ulp of the RMS (the two
// kernels sum the squares in different orders) moves across a rounding boundary.
TEST(CudaFp8, NormQuantizationIsRmsnormThenQuantization) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(9);
  for (const auto& [M, K, static_scale] :
       std::vector<std::tuple<int, int, float>>{{1, 4096, 0.f}, {5, 1000, 0.f}, {70, 512, 0.f}, {3, 256, 0.02f},
                                                {2, 8192, 0.f}, {2, 9000, 0.f}, {1, 16400, 0.f}, {3, 1002, 0.f}}) {
    SCOPED_TRACE("M " + std::to_string(M) + " K " + std::to_string(K));
    DeviceArray<float> residual(random_floats(size_t(M) * K, rng, 3.f));
    DeviceArray<float> weight(random_floats(size_t(K), rng, 1.f));
    DeviceArray<__nv_bfloat16> normed(size_t(M) * K);
    DeviceArray<__nv_fp8_e4m3> want_q(size_t(M) * K), got_q(size_t(M) * K);
    DeviceArray<float> want_s(static_cast<size_t>(M)), got_s(static_cast<size_t>(M));
    DeviceArray<__half> got_h(size_t(M) * K);
    check_cuda(launch_rmsnorm(residual.get(), weight.get(), normed.get(), M, K, 1e-5f, nullptr), "rmsnorm");
    check_cuda(launch_fp8_quantize(normed.get(), M, K, K, static_scale, want_q.get(), want_s.get(), nullptr),
               "quantize");
    check_cuda(launch_fp8_norm_quantize(residual.get(), weight.get(), 1e-5f, M, K, static_scale, got_q.get(),
                                        got_s.get(), nullptr, got_h.get()),
               "norm quantize");
    const std::vector<float> ws = want_s.download(), gs = got_s.download();
    for (int m = 0; m < M; ++m) EXPECT_NEAR(gs[m], ws[m], 1e-6f * ws[m]) << m;
    const std::vector<__nv_fp8_e4m3> wq = want_q.download(), gq = got_q.download();
    const std::vector<__half> gh = got_h.download();
    size_t differing = 0;
    for (size_t i = 0; i < wq.size(); ++i) {
      const float w = quant::e4m3_to_float(wq[i].__x), g = quant::e4m3_to_float(gq[i].__x);
      ASSERT_EQ(__half2float(gh[i]), g) << i;  // the f16 form is the code's value
      if (w == g) continue;
      ++differing;
      ASSERT_LE(std::abs(g - w), std::abs(w) * 0.13f + 2e-3f) << i;  // one e4m3 step at most
    }
    EXPECT_LE(differing, wq.size() / 1000 + 1);
  }
}

// The layer on the device against Fp8Matrix on the same (bf16-rounded) inputs, bf16 output within
// its rounding. Added into float32: the mma and direct kernels sum in float32 (only the order
// differs from the CPU's); cuBLASLt's e4m3 GEMM (fp8_linear.h) keeps fewer accumulator bits, as
// every FP8 GEMM on Hopper does, so its bar is 2^-9 of the sum of the products' magnitudes
// Σ|x_q·w_q|·s_x·s_w (bf16's rounding of that sum); a wrong scale, group or layout is off by far more.
void compare_layer(const quant::Fp8Weight& w, const std::string& what, std::vector<int> rows = {1, 3, 17, 129},
                   int32_t mma_rows = Fp8Layers::kMmaRows, int32_t gemv_rows = Fp8Layers::kGemvRows) {
  std::mt19937 rng(11);
  quant::Fp8Weight magnitude = w;
  for (auto& code : magnitude.q) code &= 0x7F;
  for (int M : rows) {
    SCOPED_TRACE(what + " M " + std::to_string(M));
    const std::vector<float> x = bf16_rounded(random_floats(size_t(M) * w.cols, rng, 1.5f));
    std::vector<float> want(size_t(M) * w.rows), abs_x(x.size()), abs_sum(want.size());
    cpu::Fp8Matrix(w).apply(x.data(), nullptr, want.data(), M);
    for (size_t i = 0; i < x.size(); ++i) abs_x[i] = std::abs(x[i]);  // |x| quantizes to |x_q|, same scales
    cpu::Fp8Matrix(magnitude).apply(abs_x.data(), nullptr, abs_sum.data(), M);
    const bool short_accumulator = Fp8Layers::path(w.rows, w.cols, w.group, M, Fp8Layers::square_blocks(w), mma_rows,
                                                   gemv_rows) == Fp8Path::kCublasLt;
    Fp8Layers layers;
    layers.set_mma_rows(mma_rows);
    layers.set_gemv_rows(gemv_rows);
    layers.add(0, w);
    layers.prepare(256);
    DeviceArray<__nv_bfloat16> dx(to_bf16(x));
    DeviceArray<__nv_bfloat16> y(want.size());
    y.poison();
    layers.run(models::Linear{0}, dx.get(), M, {y.get(), nullptr}, nullptr);
    std::vector<float> residual(want.size(), 1.0f);
    DeviceArray<float> r(residual);
    layers.run(models::Linear{0}, dx.get(), M, {nullptr, r.get()}, nullptr);
    EXPECT_EQ(layers.lt_products(), short_accumulator ? 2 : 0);  // the path picked is the path that ran
    const std::vector<float> got = to_float(y.download()), added = r.download();
    double scale = 0;
    for (float v : want) scale = std::max(scale, double(std::abs(v)));
    for (size_t i = 0; i < want.size(); ++i) {
      const double accumulation = short_accumulator ? std::ldexp(abs_sum[i], -9) : 1e-5 * scale;
      ASSERT_NEAR(got[i], want[i], 8e-3 * std::abs(want[i]) + accumulation + 1e-5 * scale) << i;  // bf16 output
      ASSERT_NEAR(added[i], 1.0f + want[i], accumulation + 1e-6) << i;
    }
  }
}

// Random e4m3 codes with a scale per block of `block_rows` rows and 128 inputs (block-wise
// checkpoints' 128 x 128 when block_rows is 128).
quant::Fp8Weight random_block_weight(int N, int K, int block_rows, std::mt19937& rng) {
  quant::Fp8Weight f;
  f.rows = N;
  f.cols = K;
  f.group = 128;
  f.q.resize(size_t(N) * K);
  for (auto& code : f.q) {
    code = static_cast<uint8_t>(rng() & 0xFF);
    if ((code & 0x7F) == 0x7F) code &= 0xF0;  // no NaN codes
  }
  const int64_t G = f.groups();
  std::vector<float> block_scale(size_t((N + block_rows - 1) / block_rows * G));
  std::uniform_real_distribution<float> u(1e-4f, 2e-3f);
  for (float& v : block_scale) v = u(rng);
  f.scale.resize(size_t(N * G));
  for (int n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) f.scale[size_t(n * G + g)] = block_scale[size_t(n / block_rows * G + g)];
  return f;
}

TEST(CudaFp8, EveryFixtureLayerMatchesTheCpu) {
  ZINFER_REQUIRE_CUDA();
  const WeightSet ws((kModels / "fp8_cases").string());
  std::ifstream in(kModels / "fp8_cases" / "cases.json");
  const nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_EQ(cases.size(), 5u);
  for (const auto& [name, c] : cases.items()) {
    const quant::QuantConfig config = quant::parse_quant_config(c["quantization_config"].dump(), "cases.json");
    compare_layer(quant::read_fp8_layer(ws, config, name + ".", {c["out_features"], c["in_features"]}), name);
  }
}

TEST(CudaFp8, EveryCompressedTensorsFixtureLayerMatchesTheCpu) {
  ZINFER_REQUIRE_CUDA();
  const WeightSet ws((kModels / "ct_fp8_cases").string());
  std::ifstream in(kModels / "ct_fp8_cases" / "cases.json");
  const nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_EQ(cases.size(), 6u);
  for (const auto& [name, c] : cases.items()) {
    quant::CheckpointReader reader(ws, quant::parse_quant_config(c["quantization_config"].dump(), "cases.json"));
    std::vector<models::TensorPart> parts;
    for (const nlohmann::json& p : c.contains("parts") ? c["parts"] : nlohmann::json::array({name})) {
      const std::string weight = p.get<std::string>() + ".weight";
      parts.push_back({weight, {ws.get(weight).shape[0], c["in_features"].get<int64_t>()}});
    }
    const std::optional<quant::Fp8Weight> w = quant::read_fp8_linear(reader, parts);
    ASSERT_TRUE(w.has_value()) << name;
    compare_layer(*w, name);
  }
}

// The shapes cuBLASLt's e4m3 GEMM takes (one scale group, K and N multiples of 16): M = 17 and
// 129 run it, and so do the smaller M where K is not a multiple of 64 (else the mma kernel). K =
// 14,336 (Llama-3-8B's down projection) is the longest sum its fast accumulation makes.
TEST(CudaFp8, CublasLtShapedLayersMatchTheCpu) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(7);
  for (const auto& [N, K] : std::vector<std::pair<int, int>>{{64, 128}, {272, 96}, {48, 1024}, {32, 14336}}) {
    const std::vector<float> w = random_floats(size_t(N) * K, rng, 0.05f);
    quant::Fp8Weight f = quant::quantize_per_channel(w.data(), N, K);
    compare_layer(f, "per channel " + std::to_string(N) + "x" + std::to_string(K));
    f.activation = quant::ActivationScheme::kStatic;
    f.input_scale = 3.0f / 448.0f;  // some inputs saturate
    compare_layer(f, "static " + std::to_string(N) + "x" + std::to_string(K));
  }
}

// run_normed (one kernel normalizes and quantizes a per-channel layer's rows) gives what the
// RMSNorm kernel followed by run() gives, on the mma kernel and on cuBLASLt, writing bf16 and
// adding into float32; a block-wise layer normalizes into `normed` first.
TEST(CudaFp8, NormedProductsAreRmsnormThenTheProduct) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(19);
  for (const auto& [N, K, block] : std::vector<std::tuple<int, int, bool>>{{272, 320, false}, {272, 96, false},
                                                                          {208, 384, true}}) {
    const quant::Fp8Weight f = block ? random_block_weight(N, K, 128, rng)
                                     : quant::quantize_per_channel(random_floats(size_t(N) * K, rng, 0.05f).data(), N, K);
    for (int M : {1, 2, 3, 129}) {
      SCOPED_TRACE(std::to_string(N) + "x" + std::to_string(K) + " M " + std::to_string(M));
      Fp8Layers layers;
      layers.add(0, f);
      layers.prepare(256);
      DeviceArray<float> residual(random_floats(size_t(M) * K, rng, 3.f));
      DeviceArray<float> norm_weight(random_floats(size_t(K), rng, 1.f));
      DeviceArray<__nv_bfloat16> normed(size_t(M) * K), want(size_t(M) * N), got(size_t(M) * N);
      check_cuda(launch_rmsnorm(residual.get(), norm_weight.get(), normed.get(), M, K, 1e-5f, nullptr), "rmsnorm");
      layers.run(models::Linear{0}, normed.get(), M, {want.get(), nullptr}, nullptr);
      const int64_t before = layers.lt_products();
      DeviceArray<__nv_bfloat16> scratch(size_t(M) * K);
      layers.run_normed(models::Linear{0}, residual.get(), norm_weight.get(), 1e-5f, scratch.get(), M,
                        {got.get(), nullptr}, nullptr);
      EXPECT_EQ(layers.lt_products() - before, before);  // the path run() took
      EXPECT_EQ(before, Fp8Layers::path(N, K, f.group, M, Fp8Layers::square_blocks(f)) == Fp8Path::kCublasLt ? 1 : 0);
      std::vector<float> sums(size_t(M) * N, 0.5f);
      DeviceArray<float> added(sums);
      layers.run_normed(models::Linear{0}, residual.get(), norm_weight.get(), 1e-5f, scratch.get(), M,
                        {nullptr, added.get()}, nullptr);
      const std::vector<float> w = to_float(want.download()), g = to_float(got.download()), a = added.download();
      double scale = 0;
      for (float v : w) scale = std::max(scale, double(std::abs(v)));
      ASSERT_GT(scale, 0.0);
      // A rare element a bf16 ulp of the RMS moves by one e4m3 step moves its products by far less.
      for (size_t i = 0; i < w.size(); ++i) {
        ASSERT_NEAR(g[i], w[i], 2e-2 * scale) << i;
        ASSERT_NEAR(a[i], 0.5f + w[i], 2e-2 * scale) << i;
      }
    }
  }
}

// run_gated (one kernel computes silu(gate) · up and quantizes it where the product reads codes)
// gives the bits that silu_mul followed by run() gives: the same activation, rounded to bf16 the
// same way, the same codes and the same product, on the mma kernel, on cuBLASLt (with block
// scaling's last rows on the mma kernel), and on the direct kernel through `activated`.
TEST(CudaFp8, GatedProductsAreSiluMulThenTheProduct) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(23);
  for (const auto& [N, K, block] : std::vector<std::tuple<int, int, bool>>{
           {272, 320, false}, {272, 96, false}, {208, 384, true}, {200, 96, false}}) {
    const quant::Fp8Weight f = block ? random_block_weight(N, K, 128, rng)
                                     : quant::quantize_per_channel(random_floats(size_t(N) * K, rng, 0.05f).data(), N, K);
    for (int M : {1, 2, 3, 17, 130}) {
      SCOPED_TRACE(std::to_string(N) + "x" + std::to_string(K) + " M " + std::to_string(M));
      Fp8Layers layers;
      layers.add(0, f);
      layers.prepare(256);
      DeviceArray<__nv_bfloat16> gate_up(to_bf16(random_floats(size_t(M) * 2 * K, rng, 4.f)));
      DeviceArray<__nv_bfloat16> activated(size_t(M) * K), want(size_t(M) * N), got(size_t(M) * N);
      check_cuda(launch_silu_mul(gate_up.get(), activated.get(), M, K, nullptr), "silu mul");
      layers.run(models::Linear{0}, activated.get(), M, {want.get(), nullptr}, nullptr);
      const int64_t before = layers.lt_products();
      DeviceArray<__nv_bfloat16> scratch(size_t(M) * K);
      got.poison();
      layers.run_gated(models::Linear{0}, gate_up.get(), scratch.get(), M, {got.get(), nullptr}, nullptr);
      EXPECT_EQ(layers.lt_products() - before, before);  // the path run() took
      std::vector<float> sums(size_t(M) * N, 0.5f);
      DeviceArray<float> want_added(sums), got_added(sums);
      layers.run(models::Linear{0}, activated.get(), M, {nullptr, want_added.get()}, nullptr);
      layers.run_gated(models::Linear{0}, gate_up.get(), scratch.get(), M, {nullptr, got_added.get()}, nullptr);
      const std::vector<__nv_bfloat16> w = want.download(), g = got.download();
      ASSERT_EQ(std::memcmp(w.data(), g.data(), w.size() * sizeof(__nv_bfloat16)), 0);
      EXPECT_EQ(want_added.download(), got_added.download());
    }
  }
}

// Which kernel computes a product, by rows and shape (fp8_linear.h).
TEST(CudaFp8, PathsAreChosenByRowsAndShape) {
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, 1), Fp8Path::kGemv);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, Fp8Layers::kGemvRows), Fp8Path::kGemv);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, Fp8Layers::kGemvRows + 1), Fp8Path::kMma);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, 1, false, Fp8Layers::kMmaRows, 0), Fp8Path::kMma);  // the GEMV off
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 128, 1, true), Fp8Path::kGemv);     // block-wise
  EXPECT_EQ(Fp8Layers::path(4096, 28672, 28672, 1), Fp8Path::kMma);         // K past the GEMV's 16,384
  EXPECT_EQ(Fp8Layers::path(4088, 4096, 4096, 1), Fp8Path::kGemv);          // N a multiple of 8, not of 16
  EXPECT_EQ(Fp8Layers::path(4088, 4096, 4096, 3), Fp8Path::kDirect);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, Fp8Layers::kMmaRows), Fp8Path::kMma);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, Fp8Layers::kMmaRows + 1), Fp8Path::kCublasLt);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, 64, false, 64), Fp8Path::kMma);  // the benchmark's setting
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 4096, 65, false, 64), Fp8Path::kCublasLt);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 128, 64), Fp8Path::kMma);     // block-wise
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 128, 4096), Fp8Path::kMma);  // block-wise, not square: 64 rows at a time
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 128, Fp8Layers::kMmaRows, true), Fp8Path::kMma);
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 128, Fp8Layers::kMmaRows + 1, true), Fp8Path::kCublasLt);  // 128 x 128 blocks
  EXPECT_EQ(Fp8Layers::path(400, 640, 128, 3, true), Fp8Path::kMma);
  EXPECT_EQ(Fp8Layers::path(400, 160, 128, 3, true), Fp8Path::kDirect);      // under 4 rows: not cuBLASLt's
  EXPECT_EQ(Fp8Layers::path(400, 160, 128, 4, true), Fp8Path::kCublasLt);
  EXPECT_EQ(Fp8Layers::path(272, 96, 96, 1), Fp8Path::kCublasLt);     // K not a multiple of 64
  EXPECT_EQ(Fp8Layers::path(200, 96, 96, 1), Fp8Path::kDirect);       // N not a multiple of 16
  EXPECT_EQ(Fp8Layers::path(4096, 4096, 96, 1), Fp8Path::kDirect);    // groups the mma kernel cannot step
}

// What the GEMV takes (host arithmetic): one row, N a multiple of 8, K of 64 up to 16,384, one
// group or groups of 128, and shared memory for two blocks per SM (x's f16 codes at K = 16,384
// and the ring fit; the partial sums of a very tall matrix do not).
TEST(CudaFp8, GemvTakesWhatItsKernelSteps) {
  EXPECT_TRUE(fp8_gemv_supports(1, 4096, 4096, 4096));
  EXPECT_TRUE(fp8_gemv_supports(1, 4096, 14336, 14336));
  EXPECT_TRUE(fp8_gemv_supports(1, 8, 64, 64));
  EXPECT_TRUE(fp8_gemv_supports(1, 4096, 16384, 128));
  EXPECT_TRUE(fp8_gemv_supports(1, 4096, 320, 128));   // the last group of 64 inputs
  EXPECT_FALSE(fp8_gemv_supports(0, 4096, 4096, 4096));
  EXPECT_FALSE(fp8_gemv_supports(2, 4096, 4096, 4096));
  EXPECT_FALSE(fp8_gemv_supports(1, 4092, 4096, 4096));  // N
  EXPECT_FALSE(fp8_gemv_supports(1, 4096, 4000, 4000));  // K not a multiple of 64
  EXPECT_FALSE(fp8_gemv_supports(1, 4096, 16448, 16448));
  EXPECT_FALSE(fp8_gemv_supports(1, 4096, 4096, 64));    // groups it does not step
  EXPECT_FALSE(fp8_gemv_supports(1, 4096, 4096, 256));
  EXPECT_FALSE(fp8_gemv_supports(1, 8 << 20, 4096, 4096));
}

// The GEMV against the CPU (and the mma kernel at two rows beside it), over the GEMV's edges: one
// tile, N not a multiple of 16, a row of one partial ring step, rows of several steps split over a block's warps (several
// items per warp), K = 16,384 (the most the prologue holds), per channel, static and block-wise
// scales (groups of 128 with a last one of 64 inputs).
TEST(CudaFp8, GemvLayersMatchTheCpu) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(29);
  const std::vector<int> rows = {1, 2};
  for (const auto& [N, K] : std::vector<std::pair<int, int>>{{8, 64}, {1000, 192}, {272, 320}, {4800, 2560}, {64, 16384}}) {
    const std::vector<float> w = random_floats(size_t(N) * K, rng, 0.05f);
    quant::Fp8Weight f = quant::quantize_per_channel(w.data(), N, K);
    ASSERT_TRUE(fp8_gemv_supports(1, N, K, static_cast<int32_t>(f.group)));
    compare_layer(f, "gemv per channel " + std::to_string(N) + "x" + std::to_string(K), rows);
    f.activation = quant::ActivationScheme::kStatic;
    f.input_scale = 3.0f / 448.0f;
    compare_layer(f, "gemv static " + std::to_string(N) + "x" + std::to_string(K), rows);
  }
  for (const auto& [N, K] : std::vector<std::pair<int, int>>{{208, 384}, {144, 320}, {4800, 2624}}) {
    const quant::Fp8Weight f = random_block_weight(N, K, 128, rng);
    ASSERT_TRUE(fp8_gemv_supports(1, N, K, 128));
    compare_layer(f, "gemv block-wise " + std::to_string(N) + "x" + std::to_string(K), rows);
  }
}

// The mma kernel at every instantiation (rows 1-8, 9-16, 17-32, 33-64; kept on up to 64 rows
// here, the GEMV off) and its edges, with the split over inputs it picks for these shapes (several: few
// outputs), one group per row and block-wise 128 x 128 scales (a 64-input step in one group; the
// last block of rows and inputs partial).
TEST(CudaFp8, MmaKernelLayersMatchTheCpu) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(13);
  const std::vector<int> rows = {1, 2, 7, 8, 9, 16, 17, 31, 33, 64};
  for (const auto& [N, K] : std::vector<std::pair<int, int>>{{272, 320}, {64, 1024}, {1040, 192}}) {
    const std::vector<float> w = random_floats(size_t(N) * K, rng, 0.05f);
    quant::Fp8Weight f = quant::quantize_per_channel(w.data(), N, K);
    ASSERT_TRUE(fp8_mma_supports(N, K, static_cast<int32_t>(f.group)));
    compare_layer(f, "per channel " + std::to_string(N) + "x" + std::to_string(K), rows, kFp8MmaMaxRows, 0);
    f.activation = quant::ActivationScheme::kStatic;
    f.input_scale = 3.0f / 448.0f;
    compare_layer(f, "static " + std::to_string(N) + "x" + std::to_string(K), rows, kFp8MmaMaxRows, 0);
  }
  for (const auto& [N, K] : std::vector<std::pair<int, int>>{{208, 384}, {144, 320}}) {
    const quant::Fp8Weight f = random_block_weight(N, K, 128, rng);
    ASSERT_TRUE(fp8_mma_supports(N, K, 128));
    compare_layer(f, "block-wise " + std::to_string(N) + "x" + std::to_string(K), rows, kFp8MmaMaxRows, 0);
  }
}

// Block-wise layers past the mma kernel's 64 rows: 128 x 128 blocks on cuBLASLt's block scaling,
// rows in fours and the last 1-3 on the mma kernel (N, K not multiples of 128, K not of 64); the
// rows of a block of 64-row blocks do not share scales, so 64 rows at a time on the mma kernel.
TEST(CudaFp8, BlockWiseLayersAboveTheMmaRowsMatchTheCpu) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(17);
  const std::vector<int> rows = {65, 128, 129, 130, 131, 200};
  for (const auto& [N, K] : std::vector<std::pair<int, int>>{{208, 384}, {144, 320}, {400, 640}, {272, 160}}) {
    const quant::Fp8Weight f = random_block_weight(N, K, 128, rng);
    ASSERT_TRUE(Fp8Layers::square_blocks(f));
    EXPECT_EQ(Fp8Layers::path(N, K, 128, 129, true), Fp8Path::kCublasLt);
    compare_layer(f, "128 x 128 blocks " + std::to_string(N) + "x" + std::to_string(K), rows);
  }
  const quant::Fp8Weight halves = random_block_weight(208, 384, 64, rng);
  EXPECT_FALSE(Fp8Layers::square_blocks(halves));
  compare_layer(halves, "64-row blocks 208x384", {65, 129});
}

std::vector<float> logits_on(const std::string& device, const std::string& dir, const std::string& quantization) {
  BackendOptions o;
  o.model_dir = dir;
  o.device = device;
  o.quantization = quantization;
  o.num_gpu_blocks = 16;
  o.max_num_seqs = 4;
  o.max_num_batched_tokens = 256;
  o.max_model_len = 256;
  o.swap_space_bytes = 0;
  auto backend = make_backend(o);
  SequenceInput s;
  s.seq_id = 1;
  for (int i = 0; i < 45; ++i) s.token_ids.push_back((i * 131 + 7) % backend->config().vocab_size);
  s.num_tokens = static_cast<int32_t>(s.token_ids.size());
  for (int b = 0; b < 16; ++b) s.block_table.push_back(15 - b);
  return backend->forward_logits(s);
}

// Quantizing activations to e4m3 (3 mantissa bits) turns the backends' different roundings before
// it (float32 on the CPU, bf16 on the device) into whole e4m3 steps of some elements, so the two
// W8A8 models differ more than two bf16 ones. How much: on the CPU alone, rounding the activations
// to bf16 before quantizing them moved llama_fp8's logits by 0.64 and online FP8 of llama_bf16's by
// 0.74 of W8A8's own distance from the unquantized model (and llama_fp8_block's by 0.05); the
// device measured 0.61, 0.73 and under 0.05 on an H200. The bar: the device's distance from the
// CPU's W8A8 model is under 0.85 of W8A8's distance from the unquantized model (a wrong scale,
// block or rounding mode is of that order or far larger), and the logits point the same way.
TEST(CudaFp8, ModelsMatchTheCpuBackend) {
  ZINFER_REQUIRE_CUDA();
  struct Case {
    std::string fixture, quantization, dense_fixture;  // dense_fixture: the model it was quantized from
  };
  for (const Case& c : std::vector<Case>{
           {"llama_fp8", "auto", "llama"},
           {"llama_fp8_block", "auto", "llama"},
           {"qwen3_fp8_block", "auto", "qwen3"},
           {"llama_ct_fp8", "auto", "llama"},
           {"llama_bf16", "fp8", "llama_bf16"}}) {
    SCOPED_TRACE(c.fixture + " quantization " + c.quantization);
    const std::vector<float> cpu = logits_on("cpu", (kModels / c.fixture).string(), c.quantization);
    const std::vector<float> gpu = logits_on("cuda", (kModels / c.fixture).string(), c.quantization);
    const std::vector<float> dense = logits_on("cpu", (kModels / c.dense_fixture).string(), "none");
    ASSERT_EQ(cpu.size(), gpu.size());
    ASSERT_EQ(cpu.size(), dense.size());
    double ab = 0, aa = 0, bb = 0, backend_gap = 0, quantization_gap = 0;
    for (size_t i = 0; i < cpu.size(); ++i) {
      ab += double(cpu[i]) * gpu[i];
      aa += double(cpu[i]) * cpu[i];
      bb += double(gpu[i]) * gpu[i];
      backend_gap += (double(gpu[i]) - cpu[i]) * (double(gpu[i]) - cpu[i]);
      quantization_gap += (double(cpu[i]) - dense[i]) * (double(cpu[i]) - dense[i]);
    }
    EXPECT_GT(ab / std::sqrt(aa * bb), 0.99);
    EXPECT_LT(std::sqrt(backend_gap), 0.85 * std::sqrt(quantization_gap));
  }
}

}  // namespace
}  // namespace zinfer::gpu::cuda::test
