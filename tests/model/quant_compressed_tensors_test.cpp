// compressed-tensors (gpu/quant/compressed_tensors.cpp, quant_config.h): its quantization_config
// read as the library defines it (config groups, presets, the strategy inferred from group_size,
// actorder, ignore, targets by name / "re:" / "Linear") and everything that is neither weight-only
// integer pack-quantized nor FP8 W8A8 float-quantized (ct_fp8_test.cpp) refused naming the field;
// a layer's tensors that disagree with its scheme
// refused naming the tensor and the file. That each committed ct_* case dequantizes to numpy's
// weight bit for bit is quant_dequantize_test's EveryCaseEqualsTheFormatsDefinitionExactly.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gpu/model_config.h"
#include "gpu/quant/dequantize.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu::quant {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
const fs::path kCases = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models/quant_cases";

using test::error_of;

// A W4A16 config as llm-compressor writes it, to edit.
json w4a16() {
  return json::parse(R"({
    "quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
    "config_groups": {"group_0": {"targets": ["Linear"], "format": "pack-quantized",
      "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", "group_size": 128,
                  "dynamic": false, "actorder": null, "observer": "minmax", "observer_kwargs": {},
                  "block_structure": null},
      "input_activations": null, "output_activations": null}},
    "ignore": ["lm_head"], "kv_cache_scheme": null, "global_compression_ratio": 1.5, "sparsity_config": {},
    "transform_config": null, "version": "0.12.2"})");
}

QuantConfig parse(const json& q) { return parse_quant_config(q.dump(), "/m/config.json"); }

TEST(CompressedTensorsConfig, ReadsTheSchemeOfEachGroup) {
  QuantConfig c = parse(w4a16());
  EXPECT_EQ(c.method, Method::kCompressedTensors);
  EXPECT_STREQ(method_name(c.method), "compressed-tensors");
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].name, "group_0");
  EXPECT_EQ(c.groups[0].targets, std::vector<std::string>{"Linear"});
  EXPECT_EQ(c.groups[0].bits, 4);
  EXPECT_EQ(c.groups[0].group_size, 128);
  EXPECT_TRUE(c.groups[0].sym);
  EXPECT_FALSE(c.groups[0].act_order);
  EXPECT_FALSE(c.groups[0].per_tensor);
  EXPECT_EQ(c.ignore, std::vector<std::string>{"lm_head"});

  // The strategy as the library infers it from group_size: -1 channel, absent tensor.
  json q = w4a16();
  json& w = q["config_groups"]["group_0"]["weights"];
  w.erase("strategy");
  w["group_size"] = -1;
  w["num_bits"] = 8;
  w["symmetric"] = false;
  c = parse(q);
  EXPECT_EQ(c.groups[0].group_size, -1);
  EXPECT_FALSE(c.groups[0].per_tensor);
  EXPECT_EQ(c.groups[0].bits, 8);
  EXPECT_FALSE(c.groups[0].sym);
  w.erase("group_size");
  EXPECT_TRUE(parse(q).groups[0].per_tensor);

  // actorder: "group" (and its aliases true, "dynamic") keeps weight_g_idx; "weight" does not.
  q = w4a16();
  for (const json& order : {json("group"), json(true), json("dynamic"), json("GROUP")}) {
    q["config_groups"]["group_0"]["weights"]["actorder"] = order;
    EXPECT_TRUE(parse(q).groups[0].act_order) << order;
  }
  for (const json& order : {json("weight"), json("static"), json(false), json(nullptr)}) {
    q["config_groups"]["group_0"]["weights"]["actorder"] = order;
    EXPECT_FALSE(parse(q).groups[0].act_order) << order;
  }

  // A layer's config carries its group's scheme.
  q["config_groups"]["group_0"]["weights"]["actorder"] = "group";
  c = parse(q);
  const QuantConfig layer = layer_config(c, c.groups[0]);
  EXPECT_EQ(layer.bits, 4);
  EXPECT_EQ(layer.pack(), 8);
  EXPECT_EQ(layer.group_size, 128);
  EXPECT_TRUE(layer.desc_act);
  EXPECT_EQ(layer.origin, "/m/config.json");
}

// The preset form {"W4A16": ["Linear"]} and mixed-precision (each group its own format).
TEST(CompressedTensorsConfig, ReadsPresetsAndMixedPrecision) {
  json q = w4a16();
  q["config_groups"] = json::parse(R"({"W8A16": ["re:.*mlp.*"], "w4a16_asym": ["Linear"]})");
  QuantConfig c = parse(q);
  ASSERT_EQ(c.groups.size(), 2u);
  for (const CtGroup& g : c.groups) {
    if (g.name == "W8A16") {
      EXPECT_EQ(g.bits, 8);
      EXPECT_TRUE(g.sym);
    } else {
      EXPECT_EQ(g.bits, 4);
      EXPECT_FALSE(g.sym);
    }
    EXPECT_EQ(g.group_size, 128);
  }
  q = w4a16();
  q["format"] = "mixed-precision";
  q["config_groups"]["group_1"] = q["config_groups"]["group_0"];
  q["config_groups"]["group_1"]["weights"]["num_bits"] = 8;
  EXPECT_EQ(parse(q).groups.size(), 2u);
  q["config_groups"]["group_1"]["format"] = "float-quantized";  // FP8 (ct_fp8_test.cpp): int weights are not
  const std::string e = error_of([&] { parse(q); });
  EXPECT_NE(e.find("config_groups.group_1.weights.type 'int' is not supported for float-quantized"), std::string::npos)
      << e;
}

TEST(CompressedTensorsConfig, RefusesWhatItCannotHonourNamingTheField) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> refused = {
      {[](json& q) { q["format"] = "float-quantized", q["config_groups"]["group_0"].erase("format"); },
       "config_groups.group_0.weights.type 'int' is not supported for float-quantized"},
      {[](json& q) { q["format"] = "naive-quantized", q["config_groups"]["group_0"].erase("format"); },
       "config_groups.group_0.weights.type 'int' is not supported for float-quantized"},
      {[](json& q) { q["format"] = "int-quantized"; }, "format 'int-quantized' is not supported yet"},
      {[](json& q) { q["format"] = "marlin-24"; }, "format 'marlin-24' is not supported yet"},
      {[](json& q) { q["config_groups"]["group_0"]["format"] = "nvfp4-pack-quantized"; },
       "config_groups.group_0.format 'nvfp4-pack-quantized'"},
      {[](json& q) { q["config_groups"]["group_0"]["input_activations"] = json::parse(R"({"num_bits": 8})"); },
       "config_groups.group_0.input_activations is not supported"},
      {[](json& q) { q["config_groups"]["group_0"]["output_activations"] = json::parse(R"({"num_bits": 8})"); },
       "config_groups.group_0.output_activations is not supported"},
      {[](json& q) { q["kv_cache_scheme"] = json::parse(R"({"num_bits": 8, "type": "int"})"); },
       "kv_cache_scheme.type 'int' is not supported"},  // the other values: kv_cache_scheme_test.cpp
      {[](json& q) { q["sparsity_config"] = json::parse(R"({"format": "sparse-24-bitmask"})"); },
       "sparsity_config is not supported"},
      {[](json& q) { q["transform_config"] = json::parse(R"({"config_groups": {}})"); },
       "transform_config is not supported"},
      {[](json& q) { q["quantization_status"] = "frozen"; }, "quantization_status 'frozen'"},
      {[](json& q) { q["weird_key"] = 1; }, "weird_key is not supported"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["num_bits"] = 3; },
       "config_groups.group_0.weights.num_bits 3"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["num_bits"] = 2; },
       "config_groups.group_0.weights.num_bits 2"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["type"] = "float"; },
       "config_groups.group_0.weights.type 'float'"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["strategy"] = "block"; },
       "config_groups.group_0.weights.strategy 'block'"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["strategy"] = "tensor_group"; },
       "strategy 'tensor_group'"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["group_size"] = 0; }, "group_size 0"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["strategy"] = "channel"; },
       "group_size 128 contradicts strategy 'channel'"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["dynamic"] = true; },
       "config_groups.group_0.weights.dynamic true"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["actorder"] = "sideways"; }, "actorder \"sideways\""},
      {[](json& q) {
         json& w = q["config_groups"]["group_0"]["weights"];
         w["strategy"] = "channel", w["group_size"] = -1, w["actorder"] = "group";
       },
       "actorder 'group' needs strategy 'group'"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["zp_dtype"] = "torch.float8_e4m3fn"; }, "zp_dtype"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["scale_dtype"] = "torch.uint8"; }, "scale_dtype"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["bits"] = 4; },
       "config_groups.group_0.weights.bits is not supported"},
      {[](json& q) { q["config_groups"]["group_0"]["extra"] = 4; }, "config_groups.group_0.extra is not supported"},
      {[](json& q) { q["config_groups"]["group_0"].erase("weights"); }, "config_groups.group_0.weights is missing"},
      {[](json& q) { q["config_groups"]["group_0"]["targets"] = json::array(); }, "targets is missing or empty"},
      {[](json& q) { q["config_groups"] = json::parse(R"({"FP8_DYNAMIC": ["Linear"]})"); },
       "preset scheme 'FP8_DYNAMIC'"},
      {[](json& q) { q["config_groups"] = json::object(); }, "config_groups is missing or empty"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["symmetric"] = "yes"; },
       "config_groups.group_0.weights.symmetric is not a boolean"},
      {[](json& q) { q["config_groups"]["group_0"]["weights"]["num_bits"] = "4"; },
       "config_groups.group_0.weights.num_bits is not an integer"},
      {[](json& q) { q["ignore"] = "lm_head"; }, "ignore is not a list"},
      {[](json& q) { q["ignore"] = json::array({"re:(unclosed"}); }, "ignore entry 're:(unclosed'"},
  };
  for (const auto& [edit, field] : refused) {
    json q = w4a16();
    edit(q);
    const std::string e = error_of([&] { parse(q); });
    EXPECT_NE(e.find(field), std::string::npos) << q.dump() << " -> " << e;
    EXPECT_NE(e.find("/m/config.json: quantization_config."), std::string::npos) << e;
  }
}

// A module's group: its exact name before a "re:" regex (matched from the start, as Python's
// re.match) before the class "Linear"; ignore by name or regex.
TEST(CompressedTensorsConfig, MapsEachModuleToItsGroup) {
  json q = w4a16();
  json& groups = q["config_groups"];
  groups["by_regex"] = groups["group_0"];
  groups["by_regex"]["targets"] = json::array({"re:.*self_attn\\.(q|k)_proj$"});
  groups["by_name"] = groups["group_0"];
  groups["by_name"]["targets"] = json::array({"model.layers.1.self_attn.q_proj"});
  q["ignore"] = json::array({"lm_head", "re:model\\.layers\\.0\\.mlp\\..*"});
  const QuantConfig c = parse(q);
  auto group = [&](const std::string& m, bool linear = true) {
    const CtGroup* g = ct_group_of(c, m, linear);
    return g ? g->name : std::string("none");
  };
  EXPECT_EQ(group("model.layers.1.self_attn.q_proj"), "by_name");
  EXPECT_EQ(group("model.layers.0.self_attn.q_proj"), "by_regex");
  EXPECT_EQ(group("model.layers.0.self_attn.k_proj"), "by_regex");
  EXPECT_EQ(group("model.layers.0.self_attn.v_proj"), "group_0");
  EXPECT_EQ(group("model.layers.0.self_attn.k_proj_extra"), "group_0");  // the regex ends in $
  EXPECT_EQ(group("model.embed_tokens", false), "none");
  EXPECT_TRUE(ct_ignored(c, "lm_head"));
  EXPECT_TRUE(ct_ignored(c, "model.layers.0.mlp.down_proj"));
  EXPECT_FALSE(ct_ignored(c, "model.layers.1.mlp.down_proj"));
  EXPECT_FALSE(ct_ignored(c, "xmodel.layers.0.mlp.down_proj"));  // anchored at the start
  EXPECT_FALSE(ct_ignored(c, "lm_head2"));                       // a name is matched whole

  groups["also_regex"] = groups["by_regex"];  // two groups at the same rank: ambiguous
  const QuantConfig twice = parse(q);
  const std::string e = error_of([&] { ct_group_of(twice, "model.layers.0.self_attn.k_proj", true); });
  EXPECT_NE(e.find("config_groups.also_regex and by_regex both target model.layers.0.self_attn.k_proj"),
            std::string::npos)
      << e;
}

// The ct_ cases' tensors, edited.
struct Case {
  SafetensorsFile file{(kCases / "cases.safetensors").string()};
  json cases = json::parse(std::ifstream(kCases / "cases.json"));
  QuantConfig config(const std::string& name) const {
    const QuantConfig c = parse_quant_config(cases[name]["quantization_config"].dump(), "cfg.json");
    return layer_config(c, c.groups.at(0));
  }
  const TensorView* find(const std::string& name) const {
    auto it = file.tensors().find(name);
    return it == file.tensors().end() ? nullptr : &it->second;
  }
  QuantizedTensors tensors(const std::string& name) const {
    return {find(name + ".weight_packed"), find(name + ".weight_zero_point"), find(name + ".weight_scale"),
            find(name + ".weight_g_idx"), find(name + ".weight_shape")};
  }
};

TEST(CompressedTensorsLayer, RefusesTensorsThatDisagreeNamingThem) {
  const Case c;
  auto expect = [](const std::string& e, const std::vector<std::string>& parts) {
    for (const std::string& p : parts) EXPECT_NE(e.find(p), std::string::npos) << p << " not in: " << e;
  };
  const QuantConfig asym = c.config("ct_w4_g32_asym");
  const QuantizedTensors good = c.tensors("ct_w4_g32_asym");
  EXPECT_EQ(dequantize(asym, good).rows, 16);

  QuantConfig g96 = asym;  // 256 inputs: 96 does not divide them
  g96.group_size = 96;
  expect(error_of([&] { dequantize(g96, good); }),
         {"ct_w4_g32_asym.weight_packed", "cases.safetensors", "group_size 96", "cfg.json"});

  QuantConfig eight = asym;  // the config says 8 bits: the packed words are too few
  eight.bits = 8;
  expect(error_of([&] { dequantize(eight, good); }),
         {"ct_w4_g32_asym.weight_packed", "expected [16, 64]", "ct_w4_g32_asym.weight_shape [16, 256]"});

  QuantizedTensors t = good;  // weight_shape of another layer
  t.shape = c.find("ct_w4_channel_asym_padded.weight_shape");
  expect(error_of([&] { dequantize(asym, t); }), {"ct_w4_g32_asym.weight_packed", "expected [12, 13]"});

  t = good;
  t.shape = nullptr;
  expect(error_of([&] { dequantize(asym, t); }), {"ct_w4_g32_asym.weight_packed", "weight_shape tensor is missing"});

  t = good;  // an int32 [2] weight_shape would do, a float one does not
  t.shape = c.find("ct_w4_g32_asym.reference");
  expect(error_of([&] { dequantize(asym, t); }), {"ct_w4_g32_asym.reference", "expected I64"});

  t = good;
  t.qzeros = nullptr;
  expect(error_of([&] { dequantize(asym, t); }),
         {"ct_w4_g32_asym.weight_packed", "weight_zero_point tensor is missing", "not symmetric", "cfg.json"});

  t = good;  // scales of another group size
  t.scales = c.find("ct_w4_g128_sym.weight_scale");
  expect(error_of([&] { dequantize(asym, t); }), {"ct_w4_g128_sym.weight_scale", "expected [16, 8]"});

  t = good;
  t.scales = c.find("ct_w4_g32_asym.weight_zero_point");  // int32 scales
  expect(error_of([&] { dequantize(asym, t); }), {"ct_w4_g32_asym.weight_zero_point"});

  t = good;
  t.qweight = c.find("ct_w4_g32_asym.weight_scale");  // not int32
  expect(error_of([&] { dequantize(asym, t); }), {"ct_w4_g32_asym.weight_scale", "expected I32"});

  const QuantConfig act = c.config("ct_w4_g32_sym_actorder");
  t = c.tensors("ct_w4_g32_sym_actorder");
  t.g_idx = nullptr;
  expect(error_of([&] { dequantize(act, t); }),
         {"ct_w4_g32_sym_actorder.weight_packed", "weight_g_idx tensor is missing", "actorder"});

  QuantConfig not_act = act;  // a permuted g_idx where actorder is not "group"
  not_act.desc_act = false;
  expect(error_of([&] { dequantize(not_act, c.tensors("ct_w4_g32_sym_actorder")); }),
         {"ct_w4_g32_sym_actorder.weight_g_idx", "actorder"});

  QuantConfig as_sym = asym;  // an asymmetric layer's packed zero points under a symmetric scheme
  as_sym.sym = true;
  expect(error_of([&] { dequantize(as_sym, good); }), {"ct_w4_g32_asym.weight_zero_point", "expected I8"});

  const QuantConfig tensor = c.config("ct_w4_tensor_asym");
  t = c.tensors("ct_w4_tensor_asym");
  t.scales = c.find("ct_w4_g32_asym.weight_scale");  // per-tensor wants one scale
  expect(error_of([&] { dequantize(tensor, t); }), {"ct_w4_g32_asym.weight_scale", "expected [1]"});
}

// Dropping weight_g_idx, or the zero points' packing along N, changes the weight: those paths are
// what makes the actorder and asymmetric cases exact.
TEST(CompressedTensorsLayer, ActOrderAndZeroPointsChangeTheWeight) {
  const Case c;
  QuantConfig act = c.config("ct_w4_g64_asym_actorder");
  QuantizedTensors t = c.tensors("ct_w4_g64_asym_actorder");
  const DenseWeight with = dequantize(act, t);
  t.g_idx = nullptr;
  act.desc_act = false;
  EXPECT_NE(with.values, dequantize(act, t).values);

  const IntWeight asym = unpack(c.config("ct_w8_g64_asym"), c.tensors("ct_w8_g64_asym"));
  size_t off_centre = 0;
  for (int32_t z : asym.zero) off_centre += z != 128;
  EXPECT_GT(off_centre, asym.zero.size() / 2);
  EXPECT_EQ(asym.bits, 8);
  EXPECT_EQ(asym.groups, 4);
  EXPECT_EQ(asym.group_size, 64);
  const IntWeight padded = unpack(c.config("ct_w4_channel_asym_padded"), c.tensors("ct_w4_channel_asym_padded"));
  EXPECT_EQ(padded.rows, 12);
  EXPECT_EQ(padded.cols, 100);
  EXPECT_EQ(padded.groups, 1);
  EXPECT_EQ(padded.group_size, 100);
}

}  // namespace
}  // namespace zinfer::gpu::quant
