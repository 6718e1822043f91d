// Quantized checkpoints end to end on the CPU backend (gpu/quant/checkpoint_reader.h): the GPTQ
// (4-bit, group 32, act-order, asymmetric) and AWQ (group 64) fixtures compute exactly what the
// same model computes from a float32 checkpoint of its dequantized weights, and that is within
// float64 reference error of an independent forward pass; a tensor-parallel group agrees with one
// rank (the whole tensor is dequantized, then sliced); a checkpoint that disagrees with its config
// is refused naming the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "gpu/backend.h"
#include "gpu/model_config.h"
#include "gpu/quant/dequantize.h"
#include "gpu/safetensors.h"
#include "gpu/safetensors_writer.h"
#include "checkpoint_folder.h"
#include "reference_forward.h"
#include "test_util.h"

namespace zinfer::gpu {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models";

using test::Entry;
using test::Folder;

// The fixture with every quantized layer replaced by its dequantized float32 weight.
Folder dequantized(const std::string& fixture) {
  Folder f(kFixtures / fixture);
  const quant::QuantConfig qc = parse_model_config(f.config.dump(), "", fixture).quantization;
  f.config.erase("quantization_config");
  std::map<std::string, Entry> out;
  for (const auto& [name, e] : f.tensors) {
    const auto dot = name.rfind('.');
    const std::string prefix = name.substr(0, dot), role = name.substr(dot + 1);
    if (role == "qzeros" || role == "scales" || role == "g_idx") continue;
    if (role == "bias" && f.tensors.count(prefix + ".qweight")) continue;  // AutoGPTQ's zeros
    if (role != "qweight") {
      out[name] = e;
      continue;
    }
    const TensorView qw = f.view(name), qz = f.view(prefix + ".qzeros"), sc = f.view(prefix + ".scales");
    std::optional<TensorView> gi;
    if (f.tensors.count(prefix + ".g_idx")) gi = f.view(prefix + ".g_idx");
    const quant::DenseWeight w = quant::dequantize(qc, {&qw, &qz, &sc, gi ? &*gi : nullptr});
    std::vector<std::byte> bytes(w.values.size() * 4);
    std::memcpy(bytes.data(), w.values.data(), bytes.size());
    out[prefix + ".weight"] = {DType::kF32, {w.rows, w.cols}, std::move(bytes)};
  }
  f.tensors = std::move(out);
  return f;
}

std::unique_ptr<Backend> open(const std::string& dir, int tp = 1) {
  BackendOptions o;
  o.model_dir = dir;
  o.num_gpu_blocks = 16;
  o.num_threads = 2;
  o.tensor_parallel_size = tp;
  return make_backend(o);
}

SequenceInput prompt(const std::vector<int32_t>& tokens) {
  SequenceInput s;
  s.seq_id = 1;
  s.token_ids = tokens;
  s.num_tokens = int32_t(tokens.size());
  s.block_table = {3, 0, 5, 1};
  s.sampling.temperature = 0.0f;
  return s;
}

const std::vector<int32_t> kTokens = {1, 17, 300, 5, 44, 511, 2, 90, 91, 7, 250, 33, 12, 400, 6, 8, 19};

class QuantizedFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizedFixture, EqualsTheModelOfItsDequantizedWeights) {
  test::ScratchDir dense_dir("dequantized");
  const Folder dense = dequantized(GetParam());
  dense.write(dense_dir.path());
  fs::copy_file(kFixtures / GetParam() / "generation_config.json", dense_dir.path() / "generation_config.json");

  auto quantized = open((kFixtures / GetParam()).string());
  EXPECT_EQ(quantized->config().quantization.method,
            GetParam() == "llama_awq" ? quant::Method::kAwq : quant::Method::kGptq);
  const std::vector<float> got = quantized->forward_logits(prompt(kTokens));
  const std::vector<float> want = open(dense_dir.str())->forward_logits(prompt(kTokens));
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got, want);  // the same float32 weights: the same bits

  // And that model is the float64 reference's within float32 rounding.
  test::ReferenceForward ref(quantized->config(), dense_dir.str());
  const auto expected = ref.logits(kTokens);
  const size_t V = quantized->config().vocab_size;
  ASSERT_EQ(got.size(), kTokens.size() * V);
  double worst = 0;
  for (size_t t = 0; t < kTokens.size(); ++t)
    for (size_t v = 0; v < V; ++v) worst = std::max(worst, std::abs(got[t * V + v] - expected[t][v]));
  EXPECT_LT(worst, 1e-4);
}

// Quantization is not a no-op: the layers hold 4-bit values, so the logits move away from the
// float32 model they were made from (tests/data/models/llama, its head tied to an fp16 embedding
// as in the fixtures), yet stay close to it.
TEST_P(QuantizedFixture, StaysNearTheModelItWasMadeFrom) {
  test::ScratchDir base_dir("base");
  Folder f(kFixtures / "llama");
  f.tensors.erase("lm_head.weight");
  f.config["tie_word_embeddings"] = true;
  Entry& embed = f.tensors.at("model.embed_tokens.weight");
  std::vector<std::byte> half(embed.bytes.size() / 2);
  for (size_t i = 0; i < half.size() / 2; ++i) {
    float x;
    std::memcpy(&x, embed.bytes.data() + 4 * i, 4);
    const uint16_t h = float_to_fp16(x);
    std::memcpy(half.data() + 2 * i, &h, 2);
  }
  embed = {DType::kF16, embed.shape, std::move(half)};
  f.write(base_dir.path());
  const std::vector<float> got = open((kFixtures / GetParam()).string())->forward_logits(prompt(kTokens));
  const std::vector<float> base = open(base_dir.str())->forward_logits(prompt(kTokens));
  ASSERT_EQ(got.size(), base.size());
  double worst = 0, spread = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, double(std::abs(got[i] - base[i])));
    spread = std::max(spread, double(std::abs(base[i])));
  }
  EXPECT_GT(worst, 1e-5);
  EXPECT_LT(worst, 0.25 * spread);
}

// Row-parallel o_proj/down_proj take a rank's columns (inputs) of W: under act-order those are
// scattered over every group, so slicing has to come after dequantizing.
TEST_P(QuantizedFixture, TensorParallelRanksMatchOneRank) {
  const std::vector<float> one = open((kFixtures / GetParam()).string())->forward_logits(prompt(kTokens));
  for (int tp : {2, 4}) {
    const std::vector<float> group = open((kFixtures / GetParam()).string(), tp)->forward_logits(prompt(kTokens));
    ASSERT_EQ(group.size(), one.size());
    double worst = 0;
    for (size_t i = 0; i < one.size(); ++i) worst = std::max(worst, double(std::abs(group[i] - one[i])));
    EXPECT_LT(worst, 1e-4) << "tp " << tp;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, QuantizedFixture, ::testing::Values("llama_gptq", "llama_awq"));

// The message of loading `fixture` edited by `edit`, or "" when it loads.
std::string load_error(const std::string& fixture, const std::function<void(Folder&)>& edit) {
  test::ScratchDir dir("broken");
  Folder f(kFixtures / fixture);
  edit(f);
  f.write(dir.path());
  try {
    open(dir.str());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(QuantizedCheckpoint, RefusesWhatDisagreesWithTheConfigNamingTheTensor) {
  const std::string q0 = "model.layers.0.self_attn.q_proj.";
  std::string e = load_error("llama_gptq", [&](Folder& f) { f.tensors.erase(q0 + "scales"); });
  EXPECT_NE(e.find(q0 + "scales"), std::string::npos) << e;
  EXPECT_NE(e.find("model.safetensors"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) { f.tensors.erase(q0 + "g_idx"); });  // desc_act needs it
  EXPECT_NE(e.find(q0 + "qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("desc_act"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) {  // a layer without qweight or weight
    f.tensors.erase(q0 + "qweight");
  });
  EXPECT_NE(e.find(q0 + "weight"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) {  // k_proj's tensors under q_proj: the shape disagrees
    for (const char* role : {"qweight", "qzeros", "scales", "g_idx"})
      f.tensors[q0 + role] = f.tensors.at(std::string("model.layers.0.self_attn.k_proj.") + role);
  });
  EXPECT_NE(e.find(q0 + "qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("expected " + q0 + "weight of [64, 64]"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) {  // both forms of one layer
    f.tensors[q0 + "weight"] = {DType::kF32, {64, 64}, std::vector<std::byte>(64 * 64 * 4)};
  });
  EXPECT_NE(e.find("also holds " + q0 + "weight"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) {  // a bias the architecture would not apply
    Entry& b = f.tensors.at(q0 + "bias");
    const uint16_t one = 0x3c00;  // fp16 1.0
    std::memcpy(b.bytes.data(), &one, 2);
  });
  EXPECT_NE(e.find(q0 + "bias"), std::string::npos) << e;
  EXPECT_NE(e.find("not zero"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) { f.config["quantization_config"]["group_size"] = 48; });
  EXPECT_NE(e.find("group_size 48"), std::string::npos) << e;
  EXPECT_NE(e.find("config.json"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) { f.config.erase("quantization_config"); });
  EXPECT_NE(e.find("model.layers.0.self_attn.q_proj.qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("no quantization_config"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) { f.config["quantization_config"]["bits"] = 3; });
  EXPECT_NE(e.find("quantization_config.bits 3"), std::string::npos) << e;

  e = load_error("llama_awq", [&](Folder& f) {
    f.config["quantization_config"]["modules_to_not_convert"] = nlohmann::json::array({"mlp.down_proj"});
  });
  EXPECT_NE(e.find("model.layers.0.mlp.down_proj.qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("modules_to_not_convert"), std::string::npos) << e;

  e = load_error("llama_gptq", [&](Folder& f) { f.config["quantization_config"]["lm_head"] = true; });
  EXPECT_NE(e.find("quantization_config.lm_head"), std::string::npos) << e;  // tied: no quantized head read

  e = load_error("llama_awq", [&](Folder& f) {  // a quantized layer no definition reads
    for (const char* role : {"qweight", "qzeros", "scales"})
      f.tensors[std::string("model.layers.0.mlp.extra_proj.") + role] =
          f.tensors.at(std::string("model.layers.0.mlp.up_proj.") + role);
  });
  EXPECT_NE(e.find("model.layers.0.mlp.extra_proj.qweight"), std::string::npos) << e;
}

}  // namespace
}  // namespace zinfer::gpu
