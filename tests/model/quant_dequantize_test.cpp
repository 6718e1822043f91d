// Quantized formats at the level of one layer (gpu/quant/): the dequantized weight equals the
// format's own definition bit for bit on every committed case (tests/data/models/quant_cases, made
// by tools/fixtures/make_quant_fixtures.py from the formats' packing code: GPTQ 4/8-bit, group
// sizes 32/64/128/-1, act-order, sym and asym, gptq_v2; AWQ GEMM; compressed-tensors pack-quantized
// 4/8-bit group/channel/tensor, sym and asym, actorder, padded last words), and every setting or
// tensor the loader cannot honour is refused naming the field or tensor and the file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpu/model_config.h"
#include "gpu/quant/dequantize.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu::quant {
namespace {

namespace fs = std::filesystem;
const fs::path kCases = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models/quant_cases";

nlohmann::json cases_json() {
  std::ifstream in(kCases / "cases.json");
  return nlohmann::json::parse(in);
}

QuantizedTensors tensors_of(const SafetensorsFile& f, const std::string& name) {
  QuantizedTensors t;
  auto find = [&](const char* role) -> const TensorView* {
    auto it = f.tensors().find(name + "." + role);
    return it == f.tensors().end() ? nullptr : &it->second;
  };
  if (name.rfind("ct_", 0) == 0) {  // compressed-tensors' names
    t.qweight = find("weight_packed");
    t.qzeros = find("weight_zero_point");
    t.scales = find("weight_scale");
    t.g_idx = find("weight_g_idx");
    t.shape = find("weight_shape");
    return t;
  }
  t.qweight = find("qweight");
  t.qzeros = find("qzeros");
  t.scales = find("scales");
  t.g_idx = find("g_idx");
  return t;
}

// A case's config as one layer reads it: compressed-tensors' from its only config group.
QuantConfig config_of(const nlohmann::json& c, const std::string& origin = "cases.json") {
  const QuantConfig config = parse_quant_config(c["quantization_config"].dump(), origin);
  return config.method == Method::kCompressedTensors ? layer_config(config, config.groups.at(0)) : config;
}

using test::error_of;

TEST(QuantDequantize, EveryCaseEqualsTheFormatsDefinitionExactly) {
  const SafetensorsFile file((kCases / "cases.safetensors").string());
  const nlohmann::json cases = cases_json();
  ASSERT_EQ(cases.size(), 20u);
  for (const auto& [name, c] : cases.items()) {
    SCOPED_TRACE(name);
    const QuantConfig config = config_of(c);
    const DenseWeight w = dequantize(config, tensors_of(file, name));
    const TensorView& ref = file.tensors().at(name + ".reference");
    ASSERT_EQ(w.rows, c["out_features"].get<int64_t>());
    ASSERT_EQ(w.cols, c["in_features"].get<int64_t>());
    ASSERT_EQ(ref.shape, (std::vector<int64_t>{w.rows, w.cols}));
    std::vector<float> expected(w.values.size());
    std::memcpy(expected.data(), ref.data, ref.nbytes);
    size_t differing = 0;
    for (size_t i = 0; i < expected.size(); ++i) differing += expected[i] != w.values[i];
    EXPECT_EQ(differing, 0u);
    // Not a weight of zeros: the cases are random layers.
    size_t nonzero = 0;
    for (float v : w.values) nonzero += v != 0.0f;
    EXPECT_GT(nonzero, w.values.size() / 2);
  }
}

// Act-order changes the answer: dropping g_idx (reading the rows as contiguous groups) gives a
// different weight, so the g_idx path is what makes the act-order case exact.
TEST(QuantDequantize, ActOrderDependsOnGIdx) {
  const SafetensorsFile file((kCases / "cases.safetensors").string());
  QuantConfig config = parse_quant_config(cases_json()["gptq_b4_g64_asym_act"]["quantization_config"].dump(), "c");
  QuantizedTensors t = tensors_of(file, "gptq_b4_g64_asym_act");
  const DenseWeight with = dequantize(config, t);
  t.g_idx = nullptr;
  config.desc_act = false;
  const DenseWeight without = dequantize(config, t);
  EXPECT_NE(with.values, without.values);
}

TEST(QuantDequantize, RefusesTensorsThatDisagreeNamingThem) {
  const SafetensorsFile file((kCases / "cases.safetensors").string());
  const nlohmann::json cases = cases_json();
  const QuantConfig gptq = parse_quant_config(cases["gptq_b4_g32_sym"]["quantization_config"].dump(), "cfg.json");
  const QuantizedTensors good = tensors_of(file, "gptq_b4_g32_sym");

  QuantConfig g96 = gptq;  // 256 inputs: 96 does not divide them
  g96.group_size = 96;
  std::string e = error_of([&] { dequantize(g96, good); });
  EXPECT_NE(e.find("group_size 96"), std::string::npos) << e;
  EXPECT_NE(e.find("gptq_b4_g32_sym.qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("cases.safetensors"), std::string::npos) << e;
  EXPECT_NE(e.find("cfg.json"), std::string::npos) << e;

  QuantizedTensors wrong = good;  // scales of another case: another shape
  wrong.scales = tensors_of(file, "gptq_b4_g64_asym_act").scales;
  e = error_of([&] { dequantize(gptq, wrong); });
  EXPECT_NE(e.find("gptq_b4_g64_asym_act.scales"), std::string::npos) << e;
  EXPECT_NE(e.find("expected [8, 16]"), std::string::npos) << e;

  wrong = good;
  wrong.qzeros = nullptr;
  e = error_of([&] { dequantize(gptq, wrong); });
  EXPECT_NE(e.find("qzeros"), std::string::npos) << e;

  wrong = good;  // a float tensor where the packed int32 belongs
  wrong.qweight = &file.tensors().at("gptq_b4_g32_sym.reference");
  e = error_of([&] { dequantize(gptq, wrong); });
  EXPECT_NE(e.find("gptq_b4_g32_sym.reference"), std::string::npos) << e;
  EXPECT_NE(e.find("expected I32"), std::string::npos) << e;

  QuantConfig asym_as_sym = parse_quant_config(cases["gptq_b4_gall_asym"]["quantization_config"].dump(), "cfg.json");
  asym_as_sym.sym = true;
  e = error_of([&] { dequantize(asym_as_sym, tensors_of(file, "gptq_b4_gall_asym")); });
  EXPECT_NE(e.find("gptq_b4_gall_asym.qzeros"), std::string::npos) << e;
  EXPECT_NE(e.find("quantization_config.sym"), std::string::npos) << e;

  QuantConfig act = parse_quant_config(cases["gptq_b4_g64_asym_act"]["quantization_config"].dump(), "cfg.json");
  QuantizedTensors no_gidx = tensors_of(file, "gptq_b4_g64_asym_act");
  no_gidx.g_idx = nullptr;
  e = error_of([&] { dequantize(act, no_gidx); });
  EXPECT_NE(e.find("gptq_b4_g64_asym_act.qweight"), std::string::npos) << e;
  EXPECT_NE(e.find("g_idx"), std::string::npos) << e;
  EXPECT_NE(e.find("desc_act"), std::string::npos) << e;

  QuantConfig not_act = act;  // a permuted g_idx without desc_act is a contradiction
  not_act.desc_act = false;
  e = error_of([&] { dequantize(not_act, tensors_of(file, "gptq_b4_g64_asym_act")); });
  EXPECT_NE(e.find("gptq_b4_g64_asym_act.g_idx"), std::string::npos) << e;
  EXPECT_NE(e.find("desc_act"), std::string::npos) << e;

  const QuantConfig awq = parse_quant_config(cases["awq_g32"]["quantization_config"].dump(), "cfg.json");
  e = error_of([&] { dequantize(awq, good); });  // GPTQ tensors read as AWQ: g_idx present, shapes off
  EXPECT_NE(e.find("gptq_b4_g32_sym.g_idx"), std::string::npos) << e;
}

// Each refused setting names its field and the file.
TEST(QuantConfigParsing, RefusesWhatTheLoaderCannotHonourNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"({"quant_method": "gptq", "bits": 3, "group_size": 128})", "bits 3"},
      {R"({"quant_method": "gptq", "bits": 2, "group_size": 128})", "bits 2"},
      {R"({"quant_method": "awq", "bits": 8, "group_size": 128})", "bits 8"},
      {R"({"quant_method": "compressed-tensors", "config_groups": {}})", "format is missing"},
      {R"({"quant_method": "fp8", "activation_scheme": "per_block"})", "activation_scheme 'per_block'"},
      {R"({"quant_method": "bitsandbytes"})", "quant_method 'bitsandbytes'"},
      {R"({"bits": 4})", "quant_method is missing"},
      {R"({"quant_method": "gptq", "bits": 4, "group_size": 0})", "group_size 0"},
      {R"({"quant_method": "gptq", "bits": 4, "checkpoint_format": "marlin"})", "checkpoint_format 'marlin'"},
      {R"({"quant_method": "gptq", "bits": 4, "pack_dtype": "int16"})", "pack_dtype 'int16'"},
      {R"({"quant_method": "gptq", "bits": 4, "dynamic": {"-:.*lm_head": {}}})", "dynamic"},
      {R"({"quant_method": "gptq", "bits": 4, "desc_act": "yes"})", "desc_act is not a boolean"},
      {R"({"quant_method": "gptq", "bits": 4, "act_order_v3": true})", "act_order_v3 is not supported"},
      {R"({"quant_method": "awq", "bits": 4, "version": "gemv"})", "version 'gemv'"},
      {R"({"quant_method": "awq", "bits": 4, "version": "exllama"})", "version 'exllama'"},
      {R"({"quant_method": "awq", "bits": 4, "zero_point": false})", "zero_point false"},
      {R"({"quant_method": "awq", "bits": 4, "modules_to_not_convert": "lm_head"})", "modules_to_not_convert"},
  };
  for (const auto& [text, field] : refused) {
    const std::string e = error_of([&] { parse_quant_config(text, "/m/config.json"); });
    EXPECT_NE(e.find(field), std::string::npos) << text << " -> " << e;
    EXPECT_NE(e.find("/m/config.json"), std::string::npos) << e;
    EXPECT_NE(e.find("quantization_config"), std::string::npos) << e;
  }
}

TEST(QuantConfigParsing, ReadsEachHonouredField) {
  QuantConfig c = parse_quant_config(
      R"({"quant_method": "gptq", "bits": 8, "group_size": -1, "desc_act": true, "sym": false,
          "checkpoint_format": "gptq_v2", "lm_head": true, "damp_percent": 0.1, "true_sequential": true,
          "model_name_or_path": null, "static_groups": false})",
      "c");
  EXPECT_EQ(c.method, Method::kGptq);
  EXPECT_EQ(c.bits, 8);
  EXPECT_EQ(c.pack(), 4);
  EXPECT_EQ(c.group_size, -1);
  EXPECT_TRUE(c.desc_act);
  EXPECT_FALSE(c.sym);
  EXPECT_FALSE(c.zeros_offset);
  EXPECT_TRUE(c.lm_head);
  c = parse_quant_config(R"({"quant_method": "gptq", "bits": 4, "group_size": 128})", "c");
  EXPECT_TRUE(c.sym);  // AutoGPTQ's defaults
  EXPECT_FALSE(c.desc_act);
  EXPECT_TRUE(c.zeros_offset);
  c = parse_quant_config(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true,
                             "version": "GEMM", "modules_to_not_convert": ["visual", "lm_head"]})",
                         "c");
  EXPECT_EQ(c.method, Method::kAwq);
  EXPECT_EQ(c.group_size, 128);
  EXPECT_EQ(c.modules_to_not_convert, (std::vector<std::string>{"visual", "lm_head"}));
}

// config.json's quantization_config reaches ModelConfig; a config without one is not quantized.
TEST(QuantConfigParsing, ModelConfigCarriesIt) {
  const std::string base = R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 32, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4)";
  EXPECT_FALSE(parse_model_config(base + "}", "", "c").quantization.quantized());
  const ModelConfig q = parse_model_config(
      base + R"(, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 32}})", "", "c");
  EXPECT_EQ(q.quantization.method, Method::kAwq);
  EXPECT_EQ(q.quantization.origin, "c");
  const std::string e = error_of([&] {
    parse_model_config(base + R"(, "quantization_config": {"quant_method": "gptq", "bits": 3}})", "", "/x/config.json");
  });
  EXPECT_NE(e.find("/x/config.json: quantization_config.bits 3"), std::string::npos) << e;
}

}  // namespace
}  // namespace zinfer::gpu::quant
