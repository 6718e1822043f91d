// FP8 W8A8 checkpoints end to end on the CPU backend: llama_fp8 (per-tensor weight scales, static
// activations, bf16 LM head in ignored_layers), llama_fp8_block and qwen3_fp8_block (block-wise
// weight_scale_inv, dynamic per-token-group activations; Qwen3's q/k norms dense) compute the float64 reference of the same W8A8 arithmetic
// (fp8_reference.h) within 1e-4 and stay near the float32 model they were quantized from; online
// FP8 of a bf16 checkpoint quantizes every decoder linear per channel (and not the embedding or
// head) and is the fp8 checkpoint of those weights; a tensor-parallel group agrees with one rank;
// and checkpoints or settings that disagree are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "fp8_model_util.h"
#include "gpu/quant/fp8.h"

namespace zinfer::gpu {
namespace {

namespace fs = std::filesystem;
using test::Entry;
using test::Folder;
using test::load_error;
const fs::path kFixtures = test::kModelFixtures;

std::unique_ptr<Backend> open(const std::string& dir, int tp = 1, const std::string& quantization = "auto") {
  return test::open_cpu(dir, tp, quantization);
}
std::vector<float> logits_of(Backend& b) { return test::prompt_logits(b); }
double worst_against_reference(const std::vector<float>& got, const std::string& dir, const ModelConfig& config,
                               const nlohmann::json& quantization_config) {
  return test::worst_against_fp8_reference(got, dir, config, quantization_config);
}

class Fp8Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Fp8Fixture, IsTheFloat64ReferenceOfTheSameArithmetic) {
  const fs::path dir = kFixtures / GetParam();
  auto b = open(dir.string());
  EXPECT_EQ(b->config().quantization.method, quant::Method::kFp8);
  const std::vector<float> got = logits_of(*b);
  ASSERT_EQ(got.size(), test::kFp8Prompt.size() * size_t(b->config().vocab_size));
  EXPECT_LT(worst_against_reference(got, dir.string(), b->config(), Folder(dir).config["quantization_config"]), 1e-4);
}

// Quantization is not a no-op, yet the logits stay near the float32 model the fixture was made from
// (its head tied to the embedding where the fixture's is).
TEST_P(Fp8Fixture, StaysNearTheModelItWasMadeFrom) {
  const std::vector<float> got = logits_of(*open((kFixtures / GetParam()).string()));
  test::ScratchDir base_dir("base");
  Folder f(kFixtures / GetParam().substr(0, GetParam().find('_')));  // llama or qwen3
  if (Folder(kFixtures / GetParam()).config.value("tie_word_embeddings", false)) {
    f.tensors.erase("lm_head.weight");
    f.config["tie_word_embeddings"] = true;
  }
  f.write(base_dir.path());
  const std::vector<float> base = logits_of(*open(base_dir.str()));
  ASSERT_EQ(got.size(), base.size());
  double worst = 0, spread = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, double(std::abs(got[i] - base[i])));
    spread = std::max(spread, double(std::abs(base[i])));
  }
  EXPECT_GT(worst, 1e-4);
  EXPECT_LT(worst, 0.25 * spread);  // the quantized fixtures' bar (quant_model_test.cpp)
}

// Column-parallel layers take rows of w_q and their scales; row-parallel ones take columns on
// block boundaries (32 here), so the groups of each rank are the whole model's. At TP 4
// qwen3_fp8_block's row-parallel inputs (o_proj 4 heads x 32, down_proj 128) split into 32-wide
// slices, on its blocks; llama_fp8_block's o_proj (64 inputs) would split at 16, mid-block, and is
// refused naming the tensor.
TEST_P(Fp8Fixture, TensorParallelRanksMatchOneRank) {
  const std::vector<float> one = logits_of(*open((kFixtures / GetParam()).string()));
  for (int tp : {2, 4}) {
    if (GetParam() == "llama_fp8_block" && tp == 4) {
      try {
        open((kFixtures / GetParam()).string(), tp);
        ADD_FAILURE() << "TP 4 of llama_fp8_block loaded";
      } catch (const std::exception& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("model.layers.0.self_attn.o_proj.weight"), std::string::npos) << what;
        EXPECT_NE(what.find("do not fall on its scale blocks of 32 inputs"), std::string::npos) << what;
      }
      continue;
    }
    const std::vector<float> group = logits_of(*open((kFixtures / GetParam()).string(), tp));
    ASSERT_EQ(group.size(), one.size());
    double worst = 0;
    for (size_t i = 0; i < one.size(); ++i) worst = std::max(worst, double(std::abs(group[i] - one[i])));
    EXPECT_LT(worst, 1e-4) << "tp " << tp;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Fp8Fixture, ::testing::Values("llama_fp8", "llama_fp8_block", "qwen3_fp8_block"));

// Online FP8 of llama_bf16 equals the fp8 checkpoint of quantize_per_channel's weights (every
// decoder linear; embedding and head as they are), which is the float64 reference's.
TEST(Fp8Online, QuantizesEveryDecoderLinearPerChannel) {
  const fs::path src = kFixtures / "llama_bf16";
  auto online = open(src.string(), 1, "fp8");
  EXPECT_TRUE(online->config().quantization.online);
  const std::vector<float> got = logits_of(*online);

  test::ScratchDir dir("online");
  Folder f(src);
  std::map<std::string, Entry> out;
  int quantized = 0;
  for (const auto& [name, e] : f.tensors) {
    const bool linear = name.find("_proj.weight") != std::string::npos;
    if (!linear) {
      out[name] = e;
      continue;
    }
    std::vector<float> w(size_t(e.shape[0] * e.shape[1]));
    to_float32(f.view(name), w.data());
    const quant::Fp8Weight q = quant::quantize_per_channel(w.data(), e.shape[0], e.shape[1]);
    std::vector<std::byte> codes(q.q.size()), scales(q.scale.size() * 4);
    std::memcpy(codes.data(), q.q.data(), codes.size());
    std::memcpy(scales.data(), q.scale.data(), scales.size());
    out[name] = {DType::kF8E4M3, e.shape, codes};
    out[name.substr(0, name.size() - 6) + "weight_scale"] = {DType::kF32, {e.shape[0]}, scales};
    ++quantized;
  }
  EXPECT_EQ(quantized, 2 * 7);
  f.tensors = out;
  f.config["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}};
  f.write(dir.path());
  fs::copy_file(src / "generation_config.json", dir.path() / "generation_config.json");
  auto stored = open(dir.str());
  EXPECT_EQ(logits_of(*stored), got);
  EXPECT_LT(worst_against_reference(got, dir.str(), stored->config(), f.config["quantization_config"]), 1e-4);

  // And it is not the bf16 model's answer, though near it.
  const std::vector<float> dense = logits_of(*open(src.string()));
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(std::abs(got[i] - dense[i])));
  EXPECT_GT(worst, 1e-4);
  EXPECT_LT(worst, 0.5);
}

TEST(Fp8Checkpoint, RefusesWhatDisagreesWithTheConfigNamingTheTensor) {
  const std::string q0 = "model.layers.0.self_attn.q_proj.";
  auto expect = [](const std::string& e, std::initializer_list<const char*> needles) {
    ASSERT_FALSE(e.empty());
    for (const char* n : needles) EXPECT_NE(e.find(n), std::string::npos) << n << " not in: " << e;
  };
  expect(load_error("llama_fp8", [&](Folder& f) { f.tensors.erase(q0 + "weight_scale"); }),
         {"model.layers.0.self_attn.q_proj.weight_scale is missing", "model.safetensors"});
  expect(load_error("llama_fp8", [&](Folder& f) { f.tensors.erase(q0 + "input_scale"); }),
         {"model.layers.0.self_attn.q_proj.input_scale is missing", "activation_scheme static"});
  expect(load_error("llama_fp8", [&](Folder& f) { f.config["quantization_config"]["activation_scheme"] = "dynamic"; }),
         {"input_scale", "dynamic"});
  expect(load_error("llama_fp8", [&](Folder& f) { f.tensors.at(q0 + "weight").dtype = DType::kF8E5M2; }),
         {"model.layers.0.self_attn.q_proj.weight", "float8_e5m2"});
  expect(load_error("llama_fp8", [&](Folder& f) {
           f.tensors[q0 + "weight_scale"] = {DType::kF32, {2, 1}, std::vector<std::byte>(8)};
         }),
         {"model.layers.0.self_attn.q_proj.weight_scale", "shape [2, 1]", "per channel"});
  expect(load_error("llama_fp8", [&](Folder& f) {
           f.tensors[q0 + "weight_scale"] = {DType::kF32, {1}, std::vector<std::byte>(4, std::byte{0xFF})};  // NaN
         }),
         {"model.layers.0.self_attn.q_proj.weight_scale", "finite"});
  expect(load_error("llama_fp8", [&](Folder& f) {  // a decoder layer stored dense, not listed
           f.tensors[q0 + "weight"] = {DType::kF32, {64, 64}, std::vector<std::byte>(64 * 64 * 4)};
           f.tensors.erase(q0 + "weight_scale");
           f.tensors.erase(q0 + "input_scale");
         }),
         {"model.layers.0.self_attn.q_proj.weight", "neither ignored_layers"});
  expect(load_error("llama_fp8", [&](Folder& f) {  // listed, yet stored in fp8
           f.config["quantization_config"]["ignored_layers"].push_back("model.layers.1.mlp.down_proj");
         }),
         {"model.layers.1.mlp.down_proj.weight", "ignored_layers lists"});
  expect(load_error("llama_fp8_block", [&](Folder& f) {
           f.tensors["model.layers.0.mlp.up_proj.weight_scale_inv"].shape = {2, 4};
         }),
         {"model.layers.0.mlp.up_proj.weight_scale_inv"});
  expect(load_error("llama_fp8_block", [&](Folder& f) { f.config["quantization_config"].erase("weight_block_size"); }),
         {"weight_scale_inv", "weight_block_size"});
  expect(load_error("llama_fp8", [&](Folder& f) {  // a scale of no layer the model reads
           f.tensors["model.layers.0.mlp.extra_proj.weight_scale"] = f.tensors.at(q0 + "weight_scale");
         }),
         {"model.layers.0.mlp.extra_proj.weight_scale"});
  expect(load_error("llama_fp8", [&](Folder& f) {  // an fp8 layer the model does not read
           for (const char* role : {"weight", "weight_scale", "input_scale"})
             f.tensors[std::string("model.layers.0.mlp.extra_proj.") + role] = f.tensors.at(q0 + role);
         }),
         {"model.layers.0.mlp.extra_proj.weight", "an fp8 layer this architecture does not read"});
  expect(load_error("llama_fp8", [&](Folder& f) { f.config.erase("quantization_config"); }),
         {"model.layers.0.self_attn.q_proj.weight", "no quantization_config"});
  // The setting against the checkpoint.
  expect(load_error("llama_fp8", [](Folder&) {}, "none"), {"quantization 'none'", "'fp8'"});
  expect(load_error("llama_gptq", [](Folder&) {}, "fp8"), {"quantization 'fp8'", "'gptq'"});
  expect(load_error("llama_fp8", [](Folder&) {}, "int8"), {"'int8'"});
  EXPECT_EQ(load_error("llama_fp8", [](Folder&) {}, "fp8"), "");  // fp8 on an fp8 checkpoint: as it is
}

}  // namespace
}  // namespace zinfer::gpu
