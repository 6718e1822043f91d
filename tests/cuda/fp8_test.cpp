// FP8 W8A8 on the CUDA backend (gpu/cuda/fp8_linear.h) against the CPU backend's FP8 arithmetic
// (gpu/cpu/fp8_matrix.h, itself checked against numpy's float64 in tests/model/fp8_test.cpp):
//   - the activation quantization kernel gives the CPU's e4m3 codes and scales bit for bit;
//   - every layer of tests/data/models/fp8_cases (per-tensor / per-channel, static / dynamic,
//     block 128 x 128 with N, K not multiples of 128: the direct kernel) and per-channel layers
//     cuBLASLt's e4m3 GEMM takes (K, N multiples of 16), at M = 1, 3, 17, 129, with bf16 output and
//     added into a float32 residual, match the CPU within bf16 output rounding;
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
#include "gpu/cuda/fp8_kernels.h"
#include "gpu/cuda/fp8_linear.h"
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

TEST(CudaFp8, ActivationQuantizationIsTheCpus) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(5);
  for (const auto& [M, K, group, static_scale] :
       std::vector<std::tuple<int, int, int, float>>{{3, 200, 200, 0.f}, {17, 300, 128, 0.f}, {5, 64, 64, 0.01f}}) {
    std::vector<float> x = bf16_rounded(random_floats(size_t(M) * K, rng, 2.f));
    std::fill(x.begin(), x.begin() + K, 0.f);  // a zero row
    DeviceArray<__nv_bfloat16> dx(to_bf16(x));
    DeviceArray<__nv_fp8_e4m3> dq(size_t(M) * K);
    const int G = (K + group - 1) / group;
    DeviceArray<float> ds(size_t(M) * G);
    check_cuda(launch_fp8_quantize(dx.get(), M, K, group, static_scale, dq.get(), ds.get(), nullptr), "quantize");
    const std::vector<__nv_fp8_e4m3> q = dq.download();
    const std::vector<float> s = ds.download();
    std::vector<float> want_q(x.size()), want_s(s.size());
    quant::quantize_activations(x.data(), M, K, group,
                                static_scale > 0 ? quant::ActivationScheme::kStatic : quant::ActivationScheme::kDynamic,
                                static_scale, want_q.data(), want_s.data());
    EXPECT_EQ(s, want_s);
    size_t differing = 0;
    for (size_t i = 0; i < q.size(); ++i) differing += quant::e4m3_to_float(q[i].__x) != want_q[i];
    EXPECT_EQ(differing, 0u) << "M " << M << " K " << K;
  }
}

// The layer on the device against Fp8Matrix on the same (bf16-rounded) inputs.
void compare_layer(const quant::Fp8Weight& w, const std::string& what) {
  std::mt19937 rng(11);
  for (int M : {1, 3, 17, 129}) {
    SCOPED_TRACE(what + " M " + std::to_string(M));
    const std::vector<float> x = bf16_rounded(random_floats(size_t(M) * w.cols, rng, 1.5f));
    std::vector<float> want(size_t(M) * w.rows);
    cpu::Fp8Matrix(w).apply(x.data(), nullptr, want.data(), M);
    Fp8Layers layers;
    layers.add(0, w);
    layers.prepare(256);
    DeviceArray<__nv_bfloat16> dx(to_bf16(x));
    DeviceArray<__nv_bfloat16> y(want.size());
    y.poison();
    layers.run(models::Linear{0}, dx.get(), M, {y.get(), nullptr}, nullptr);
    std::vector<float> residual(want.size(), 1.0f);
    DeviceArray<float> r(residual);
    layers.run(models::Linear{0}, dx.get(), M, {nullptr, r.get()}, nullptr);
    const std::vector<float> got = to_float(y.download()), added = r.download();
    double scale = 0;
    for (float v : want) scale = std::max(scale, double(std::abs(v)));
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 8e-3 * std::abs(want[i]) + 1e-5 * scale) << i;  // bf16 output
      ASSERT_NEAR(added[i], 1.0f + want[i], 1e-5 * scale + 1e-6) << i;             // float32 accumulation

    }
  }
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

// The shapes cuBLASLt's e4m3 GEMM would take (one scale group, K and N multiples of 16); they run
// the direct kernel while that GEMM is off (fp8_linear.h says why).
TEST(CudaFp8, CublasLtShapedLayersMatchTheCpu) {
  ZINFER_REQUIRE_CUDA();
  std::mt19937 rng(7);
  for (const auto& [N, K] : std::vector<std::pair<int, int>>{{64, 128}, {272, 96}, {48, 1024}}) {
    const std::vector<float> w = random_floats(size_t(N) * K, rng, 0.05f);
    quant::Fp8Weight f = quant::quantize_per_channel(w.data(), N, K);
    compare_layer(f, "per channel " + std::to_string(N) + "x" + std::to_string(K));
    f.activation = quant::ActivationScheme::kStatic;
    f.input_scale = 3.0f / 448.0f;  // some inputs saturate
    compare_layer(f, "static " + std::to_string(N) + "x" + std::to_string(K));
  }
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
