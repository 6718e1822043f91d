// Quantized checkpoints end to end on the CPU backend (gpu/quant/checkpoint_reader.h): the GPTQ
// (4-bit, group 32, act-order, asymmetric: llama_gptq, qwen3_gptq, and phi3_gptq, whose fused
// qkv_proj and gate_up_proj are each quantized as one matrix), AWQ (group 64: llama_awq,
// qwen3_awq, and phi3_awq, fused the same way) and
// compressed-tensors (two config groups: W4 g32 asym actorder by regex, W8 channel by "Linear";
// lm_head ignored) fixtures compute exactly what the same model computes from a float32 checkpoint
// of its dequantized weights, and that is within float64 reference error of an independent forward
// pass; a tensor-parallel group agrees with one rank (the whole tensor is dequantized, then sliced:
// for Phi-3 a rank's q, k and v rows out of the one dequantized qkv_proj); a checkpoint that
// disagrees with its config is refused naming the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "gpu/backend.h"
#include "gpu/model_config.h"
#include "gpu/quant/checkpoint_reader.h"
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

// The fixture with every quantized layer replaced by its dequantized float32 weight; `replaced`
// gets the names of those weights.
Folder dequantized(const std::string& fixture, std::set<std::string>* replaced = nullptr) {
  Folder f(kFixtures / fixture);
  const quant::QuantConfig qc = parse_model_config(f.config.dump(), "", fixture).quantization;
  const bool ct = qc.method == quant::Method::kCompressedTensors;
  f.config.erase("quantization_config");
  std::map<std::string, Entry> out;
  for (const auto& [name, e] : f.tensors) {
    const auto dot = name.rfind('.');
    const std::string prefix = name.substr(0, dot), role = name.substr(dot + 1);
    const std::set<std::string> beside = ct ? std::set<std::string>{"weight_zero_point", "weight_scale", "weight_g_idx",
                                                                     "weight_shape"}
                                            : std::set<std::string>{"qzeros", "scales", "g_idx"};
    if (beside.count(role)) continue;
    if (role == "bias" && f.tensors.count(prefix + ".qweight")) continue;  // AutoGPTQ's zeros
    if (role != (ct ? "weight_packed" : "qweight")) {
      out[name] = e;
      continue;
    }
    std::map<std::string, TensorView> views;
    for (const std::string& r : beside)
      if (f.tensors.count(prefix + "." + r)) views[r] = f.view(prefix + "." + r);
    auto at = [&](const char* r) { return views.count(r) ? &views.at(r) : nullptr; };
    const TensorView packed = f.view(name);
    quant::DenseWeight w;
    if (ct) {
      const quant::CtGroup* g = quant::ct_group_of(qc, prefix, true);
      w = quant::dequantize(quant::layer_config(qc, *g),
                            {&packed, at("weight_zero_point"), at("weight_scale"), at("weight_g_idx"), at("weight_shape")});
    } else {
      w = quant::dequantize(qc, {&packed, at("qzeros"), at("scales"), at("g_idx")});
    }
    std::vector<std::byte> bytes(w.values.size() * 4);
    std::memcpy(bytes.data(), w.values.data(), bytes.size());
    out[prefix + ".weight"] = {DType::kF32, {w.rows, w.cols}, std::move(bytes)};
    if (replaced) replaced->insert(prefix + ".weight");
  }
  f.tensors = std::move(out);
  return f;
}

quant::Method method_of(const std::string& fixture) {
  return fixture.find("_awq") != std::string::npos ? quant::Method::kAwq
         : fixture == "llama_ct" ? quant::Method::kCompressedTensors
                                 : quant::Method::kGptq;
}

// The float32 model each fixture was quantized from.
std::string base_of(const std::string& fixture) { return fixture.substr(0, fixture.find('_')); }

// Phi-3's fused tensors split into Llama's names (q/k/v, gate/up rows in that order), the form the
// float64 reference forward reads.
void split_fused(Folder& f, const ModelConfig& c) {
  const int64_t q_rows = int64_t{c.num_attention_heads} * c.head_dim, kv_rows = int64_t{c.num_key_value_heads} * c.head_dim;
  auto split = [&](const std::string& prefix, const std::string& module,
                   const std::vector<std::pair<std::string, int64_t>>& parts) {
    const std::string fused = prefix + module + ".weight";
    if (!f.tensors.count(fused)) return;
    const Entry e = f.tensors.at(fused);
    ASSERT_EQ(e.dtype, DType::kF32) << fused;
    const size_t row_bytes = size_t(e.shape[1]) * 4;
    size_t at = 0;
    for (const auto& [name, rows] : parts) {
      std::vector<std::byte> bytes(e.bytes.begin() + long(at), e.bytes.begin() + long(at + size_t(rows) * row_bytes));
      f.tensors[prefix + name + ".weight"] = {DType::kF32, {rows, e.shape[1]}, std::move(bytes)};
      at += size_t(rows) * row_bytes;
    }
    ASSERT_EQ(at, e.bytes.size()) << fused;
    f.tensors.erase(fused);
  };
  for (int32_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    split(p + "self_attn.", "qkv_proj", {{"q_proj", q_rows}, {"k_proj", kv_rows}, {"v_proj", kv_rows}});
    split(p + "mlp.", "gate_up_proj", {{"gate_proj", c.intermediate_size}, {"up_proj", c.intermediate_size}});
  }
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
  EXPECT_EQ(quantized->config().quantization.method, method_of(GetParam()));
  const std::vector<float> got = quantized->forward_logits(prompt(kTokens));
  const std::vector<float> want = open(dense_dir.str())->forward_logits(prompt(kTokens));
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got, want);  // the same float32 weights: the same bits

  // And that model is the float64 reference's within float32 rounding (which reads q/k/v and
  // gate/up apart).
  test::ScratchDir split_dir("split");
  Folder split = dense;
  split_fused(split, quantized->config());
  split.write(split_dir.path());
  test::ReferenceForward ref(quantized->config(), split_dir.str());
  const auto expected = ref.logits(kTokens);
  const size_t V = quantized->config().vocab_size;
  ASSERT_EQ(got.size(), kTokens.size() * V);
  double worst = 0;
  for (size_t t = 0; t < kTokens.size(); ++t)
    for (size_t v = 0; v < V; ++v) worst = std::max(worst, std::abs(got[t * V + v] - expected[t][v]));
  EXPECT_LT(worst, 1e-4);
}

// Quantization is not a no-op: the layers hold 4- and 8-bit values, so the logits move away from
// the float32 model they were made from (tests/data/models/llama, qwen3 or phi3, with the
// fixture's own embedding and head, which the fixtures store in fp16 or bf16), yet stay close to it.
TEST_P(QuantizedFixture, StaysNearTheModelItWasMadeFrom) {
  test::ScratchDir base_dir("base");
  std::set<std::string> replaced;
  Folder base = dequantized(GetParam(), &replaced);
  const Folder original(kFixtures / base_of(GetParam()));
  // llama: 7 linear layers in each of 2 decoder layers; qwen3: 7 in each of 3; phi3: 4 (two fused) in each of 2
  const std::map<std::string, size_t> layers = {{"llama", 14}, {"qwen3", 21}, {"phi3", 8}};
  ASSERT_EQ(replaced.size(), layers.at(base_of(GetParam())));
  for (const std::string& name : replaced) base.tensors.at(name) = original.tensors.at(name);
  base.write(base_dir.path());
  fs::copy_file(kFixtures / GetParam() / "generation_config.json", base_dir.path() / "generation_config.json");
  const std::vector<float> got = open((kFixtures / GetParam()).string())->forward_logits(prompt(kTokens));
  const std::vector<float> want = open(base_dir.str())->forward_logits(prompt(kTokens));
  ASSERT_EQ(got.size(), want.size());
  double worst = 0, moved = 0, size = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, double(std::abs(got[i] - want[i])));
    moved += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    size += double(want[i]) * want[i];
  }
  EXPECT_GT(worst, 1e-5);
  // 4-bit round-to-nearest moves every layer's weights by about 8% (relative L2), which moves
  // these small random models' logits by 0.15 (llama_ct) to 0.32 (qwen3_gptq, three layers);
  // a misread packing order moves a layer's weights by about 140%.
  EXPECT_LT(std::sqrt(moved / size), 0.4);
}

// Row-parallel o_proj/down_proj take a rank's columns (inputs) of W: under act-order those are
// scattered over every group, so slicing has to come after dequantizing. Every fixture has 4 query
// and 2 KV heads, so TP 4 keeps one KV head per rank (each replicated on two ranks); phi3's ranks
// take their q, k and v rows (and gate and up rows) out of one dequantized fused tensor.
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

INSTANTIATE_TEST_SUITE_P(Fixtures, QuantizedFixture, ::testing::Values("llama_gptq", "llama_awq", "llama_ct", "qwen3_gptq",
                                                                   "qwen3_awq", "phi3_gptq", "phi3_awq"));

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

// Phi-3's fused layers are one quantized tensor each: what disagrees is named by the fused name.
TEST(QuantizedCheckpoint, RefusesADisagreeingFusedLayerNamingTheFusedTensor) {
  const std::string qkv = "model.layers.1.self_attn.qkv_proj.", gate_up = "model.layers.0.mlp.gate_up_proj.";
  std::string e = load_error("phi3_gptq", [&](Folder& f) { f.tensors.erase(qkv + "g_idx"); });
  EXPECT_NE(e.find(qkv + "qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("desc_act"), std::string::npos) << e;

  e = load_error("phi3_gptq", [&](Folder& f) { f.tensors.erase(gate_up + "qzeros"); });
  EXPECT_NE(e.find(gate_up + "qzeros"), std::string::npos) << e;

  e = load_error("phi3_gptq", [&](Folder& f) {  // gate_up's 256 rows where qkv's 128 belong
    for (const char* role : {"qweight", "qzeros", "scales", "g_idx", "bias"})
      f.tensors[std::string("model.layers.0.self_attn.qkv_proj.") + role] = f.tensors.at(gate_up + role);
  });
  EXPECT_NE(e.find("model.layers.0.self_attn.qkv_proj.qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("expected model.layers.0.self_attn.qkv_proj.weight of [128, 64]"), std::string::npos) << e;

  e = load_error("phi3_gptq", [&](Folder& f) {  // Llama's unfused names: no Phi-3 definition reads them
    for (const char* role : {"qweight", "qzeros", "scales", "g_idx"})
      f.tensors[std::string("model.layers.0.self_attn.q_proj.") + role] = f.tensors.at(qkv + role);
  });
  EXPECT_NE(e.find("model.layers.0.self_attn.q_proj.qweight"), std::string::npos) << e;
}

// compressed-tensors: the checkpoint and its config_groups / ignore must agree on every layer.
TEST(QuantizedCheckpoint, CompressedTensorsRefusesWhatDisagreesNamingTheTensor) {
  const std::string q0 = "model.layers.0.self_attn.q_proj.", d1 = "model.layers.1.mlp.down_proj.";
  auto expect = [](const std::string& e, const std::vector<std::string>& parts) {
    for (const std::string& p : parts) EXPECT_NE(e.find(p), std::string::npos) << p << " not in: " << e;
  };
  auto qc = [](Folder& f) -> nlohmann::json& { return f.config["quantization_config"]; };

  // ignore honoured: without it the dense lm_head is a linear layer group_1 ("Linear") targets.
  expect(load_error("llama_ct", [&](Folder& f) { qc(f)["ignore"] = nlohmann::json::array(); }),
         {"lm_head.weight", "stored dense", "config_groups.group_1", "ignore"});
  // ... and a quantized layer it lists is refused.
  expect(load_error("llama_ct", [&](Folder& f) { qc(f)["ignore"].push_back("re:.*layers\\.1\\.mlp\\.down_proj"); }),
         {d1 + "weight_packed", "model.safetensors", "ignore lists model.layers.1.mlp.down_proj"});
  // A packed layer no target names: group_1 narrowed to the gate and up projections.
  expect(load_error("llama_ct",
                    [&](Folder& f) {
                      qc(f)["config_groups"]["group_1"]["targets"] = nlohmann::json::array({"re:.*(gate|up)_proj"});
                    }),
         {"model.layers.0.mlp.down_proj.weight_packed", "no quantization_config.config_groups target names"});
  // The regex group narrowed: q_proj falls to group_1 (8-bit channel), which its tensors are not.
  expect(load_error("llama_ct",
                    [&](Folder& f) {
                      qc(f)["config_groups"]["group_0"]["targets"] = nlohmann::json::array({"re:.*(k|v|o)_proj$"});
                    }),
         {q0 + "weight_packed", "expected [64, 16]"});
  expect(load_error("llama_ct", [&](Folder& f) { f.tensors.erase(q0 + "weight_zero_point"); }),
         {q0 + "weight_zero_point", "missing"});
  expect(load_error("llama_ct", [&](Folder& f) { f.tensors.erase(q0 + "weight_g_idx"); }),
         {q0 + "weight_packed", "weight_g_idx", "actorder"});
  expect(load_error("llama_ct", [&](Folder& f) { f.tensors.erase(d1 + "weight_shape"); }),
         {d1 + "weight_shape", "missing"});
  expect(load_error("llama_ct", [&](Folder& f) { f.tensors.erase(d1 + "weight_packed"); }),
         {d1 + "weight_packed is missing", "config_groups.group_1"});
  expect(load_error("llama_ct",
                    [&](Folder& f) {  // weight_shape says [64, 256]: more inputs than down_proj has
                      int64_t wrong[2] = {64, 256};
                      std::memcpy(f.tensors.at(d1 + "weight_shape").bytes.data(), wrong, sizeof(wrong));
                    }),
         {d1 + "weight_packed", "expected [64, 64]", d1 + "weight_shape [64, 256]"});
  expect(load_error("llama_ct",
                    [&](Folder& f) {  // both forms of one layer
                      f.tensors[d1 + "weight"] = {DType::kF32, {64, 128}, std::vector<std::byte>(64 * 128 * 4)};
                    }),
         {"also holds " + d1 + "weight"});
  expect(load_error("llama_ct", [&](Folder& f) { qc(f)["config_groups"]["group_0"]["weights"]["group_size"] = 48; }),
         {q0 + "weight_packed", "group_size 48", "config.json"});
  expect(load_error("llama_ct", [&](Folder& f) { qc(f)["config_groups"]["group_1"]["format"] = "int-quantized"; }),
         {"config.json: quantization_config.config_groups.group_1.format 'int-quantized' is not supported yet"});
  expect(load_error("llama_ct", [&](Folder& f) { f.config.erase("quantization_config"); }),
         {q0 + "weight_packed", "no quantization_config"});
  expect(load_error("llama_ct",
                    [&](Folder& f) {  // a quantized layer no definition reads
                      for (const char* role : {"weight_packed", "weight_scale", "weight_shape"})
                        f.tensors[std::string("model.layers.0.mlp.extra_proj.") + role] =
                            f.tensors.at(std::string("model.layers.0.mlp.up_proj.") + role);
                    }),
         {"model.layers.0.mlp.extra_proj.weight_packed", "does not read"});
}

// What a backend that keeps layers quantized sizes its storage by (the CUDA store's int4 layers):
// each format's packed tensor, a dense layer not.
TEST(QuantizedCheckpoint, StoresQuantizedKnowsEachFormatsPackedTensor) {
  for (const std::string fixture : {"llama_gptq", "llama_awq", "llama_ct"}) {
    SCOPED_TRACE(fixture);
    const WeightSet weights((kFixtures / fixture).string());
    const ModelConfig config = parse_model_config(
        [&] {
          std::ifstream in(kFixtures / fixture / "config.json");
          return std::string(std::istreambuf_iterator<char>(in), {});
        }(),
        "", fixture);
    const quant::CheckpointReader reader(weights, config.quantization);
    EXPECT_TRUE(reader.stores_quantized("model.layers.1.mlp.down_proj.weight"));
    EXPECT_TRUE(reader.stores_quantized("model.layers.0.self_attn.q_proj.weight"));
    EXPECT_FALSE(reader.stores_quantized("model.embed_tokens.weight"));
    EXPECT_FALSE(reader.stores_quantized("lm_head.weight"));
  }
  const WeightSet phi3((kFixtures / "phi3_gptq").string());
  const quant::CheckpointReader reader(phi3, parse_model_config(Folder(kFixtures / "phi3_gptq").config.dump(), "", "phi3_gptq")
                                                 .quantization);
  EXPECT_TRUE(reader.stores_quantized("model.layers.0.self_attn.qkv_proj.weight"));
  EXPECT_TRUE(reader.stores_quantized("model.layers.1.mlp.gate_up_proj.weight"));
  EXPECT_FALSE(reader.stores_quantized("lm_head.weight"));
}

}  // namespace
}  // namespace zinfer::gpu
