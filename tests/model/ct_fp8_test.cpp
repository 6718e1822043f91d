// compressed-tensors float-quantized FP8 W8A8 at the level of one layer (gpu/quant/ct_fp8.h,
// ct_fp8_scheme.h) against tests/data/models/ct_fp8_cases (tools/fixtures/make_ct_fp8_fixtures.py,
// numpy from the format's definition): each case read through the checkpoint reader as its config
// group says (per-tensor, per-channel, block; static and dynamic inputs; bf16 and scalar scales;
// an older writer's zero zero points; three per-tensor q/k/v parts fused into one layer) is
// numpy's dense weight bit for bit and its W8A8 product within float32 rounding; the schemes the
// library defines (presets, the inferred strategy, mixed-precision groups) are read as it defines
// them, and every setting the FP8 path cannot compute is refused naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "fp8_case_check.h"
#include "gpu/cpu/fp8_matrix.h"
#include "gpu/model_config.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/quant/fp8_parts.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"

namespace zinfer::gpu::quant {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
const fs::path kCases = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models/ct_fp8_cases";

// The case's layer as a weight store reads it: the checkpoint reader's FP8 form of each part,
// stacked (one part unless the case lists several).
Fp8Weight read_case(const WeightSet& ws, const std::string& name, const json& c, const QuantConfig& config) {
  CheckpointReader reader(ws, config);
  std::vector<models::TensorPart> parts;
  const int64_t K = c["in_features"];
  if (c.contains("parts")) {
    for (const json& p : c["parts"]) {
      const std::string weight = p.get<std::string>() + ".weight";
      parts.push_back({weight, {ws.get(weight).shape[0], K}});
    }
  } else {
    parts.push_back({name + ".weight", {c["out_features"].get<int64_t>(), K}});
  }
  std::optional<Fp8Weight> w = read_fp8_linear(reader, parts);
  if (!w) throw std::runtime_error(name + " was not read as an fp8 layer");
  return *w;
}

TEST(CtFp8Layer, EveryCaseIsTheFormatsWeightAndProduct) {
  const WeightSet ws(kCases.string());
  std::ifstream in(kCases / "cases.json");
  const json cases = json::parse(in);
  ASSERT_EQ(cases.size(), 6u);
  for (const auto& [name, c] : cases.items()) {
    SCOPED_TRACE(name);
    const QuantConfig config = parse_quant_config(c["quantization_config"].dump(), "cases.json");
    ASSERT_EQ(config.method, Method::kCompressedTensors);
    ASSERT_TRUE(config.groups.at(0).fp8);
    const int64_t N = c["out_features"], K = c["in_features"];
    const Fp8Weight w = read_case(ws, name, c, config);
    EXPECT_EQ(w.rows, N);
    EXPECT_EQ(w.group, name == "block_dynamic" ? 128 : K);
    EXPECT_EQ(w.activation, ws.has(name + ".input_scale") || name == "fused" ? ActivationScheme::kStatic
                                                                              : ActivationScheme::kDynamic);
    expect_matches_case(ws, name, w);
  }
}

// The fused parts keep their own per-tensor scales on their rows (no requantization) and share
// the largest input scale.
TEST(CtFp8Layer, FusedPartsKeepTheirScalesAndShareTheLargestInputScale) {
  const WeightSet ws(kCases.string());
  std::ifstream in(kCases / "cases.json");
  const json c = json::parse(in)["fused"];
  const Fp8Weight w = read_case(ws, "fused", c, parse_quant_config(c["quantization_config"].dump(), "cases.json"));
  float largest = 0;
  int64_t row = 0;
  for (const char* part : {"q_proj", "k_proj", "v_proj"}) {
    const std::string p = std::string("fused.") + part;
    const float s = values_of<float>(ws.get(p + ".weight_scale"))[0];
    largest = std::max(largest, values_of<float>(ws.get(p + ".input_scale"))[0]);
    const int64_t rows = ws.get(p + ".weight").shape[0];
    for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(w.scale_at(row + r, 0), s) << p << " row " << r;
    row += rows;
  }
  EXPECT_EQ(w.input_scale, largest);
  EXPECT_NE(values_of<float>(ws.get("fused.q_proj.weight_scale"))[0],
            values_of<float>(ws.get("fused.v_proj.weight_scale"))[0]);
}

// A float-quantized config as llm-compressor writes it (FP8_DYNAMIC spelled out), to edit.
json fp8_dynamic() {
  return json::parse(R"({
    "quant_method": "compressed-tensors", "format": "float-quantized", "quantization_status": "compressed",
    "config_groups": {"group_0": {"targets": ["Linear"], "format": "float-quantized",
      "weights": {"num_bits": 8, "type": "float", "symmetric": true, "strategy": "channel", "group_size": null,
                  "dynamic": false, "actorder": null, "observer": "minmax", "observer_kwargs": {},
                  "block_structure": null},
      "input_activations": {"num_bits": 8, "type": "float", "symmetric": true, "strategy": "token",
                            "group_size": null, "dynamic": true, "actorder": null, "observer": null,
                            "observer_kwargs": {}, "block_structure": null},
      "output_activations": null}},
    "ignore": ["lm_head"], "kv_cache_scheme": null, "global_compression_ratio": null, "sparsity_config": {},
    "transform_config": {}, "version": "0.12.2"})");
}

QuantConfig parse(const json& q) { return parse_quant_config(q.dump(), "/m/config.json"); }

TEST(CtFp8Config, ReadsTheSchemesAsTheLibraryDefinesThem) {
  QuantConfig c = parse(fp8_dynamic());
  ASSERT_EQ(c.groups.size(), 1u);
  const CtGroup& g = c.groups[0];
  EXPECT_TRUE(g.fp8);
  EXPECT_EQ(g.bits, 8);
  EXPECT_FALSE(g.per_tensor);
  EXPECT_EQ(g.block_n, 0);
  EXPECT_EQ(g.activation, ActivationScheme::kDynamic);

  // naive-quantized is the same storage; the strategies inferred from group_size: none is tensor.
  json q = fp8_dynamic();
  q["format"] = "naive-quantized";
  q["config_groups"]["group_0"].erase("format");
  json& w = q["config_groups"]["group_0"]["weights"];
  json& x = q["config_groups"]["group_0"]["input_activations"];
  w.erase("strategy");
  x.erase("strategy");
  x["dynamic"] = false;
  c = parse(q);
  EXPECT_TRUE(c.groups[0].per_tensor);
  EXPECT_EQ(c.groups[0].activation, ActivationScheme::kStatic);
  w["group_size"] = -1;
  EXPECT_FALSE(parse(q).groups[0].per_tensor);

  // neuralmagic's Meta-Llama-3.1-8B-Instruct-FP8 as written: naive-quantized, status frozen, the
  // QuantizationArgs' defaults (symmetric, static) left out.
  c = parse(json::parse(R"({"quant_method": "compressed-tensors", "format": "naive-quantized",
    "quantization_status": "frozen", "ignore": ["lm_head"], "config_groups": {"group_0": {"targets": ["Linear"],
      "weights": {"num_bits": 8, "strategy": "tensor", "type": "float"},
      "input_activations": {"num_bits": 8, "strategy": "tensor", "type": "float"}}}})"));
  EXPECT_TRUE(c.groups[0].per_tensor);
  EXPECT_EQ(c.groups[0].activation, ActivationScheme::kStatic);

  // Block weights, in both spellings of block_structure, beside per-token-group inputs.
  q = fp8_dynamic();
  q["config_groups"]["group_0"]["weights"]["strategy"] = "block";
  q["config_groups"]["group_0"]["weights"]["block_structure"] = "64x32";
  q["config_groups"]["group_0"]["input_activations"]["strategy"] = "group";
  q["config_groups"]["group_0"]["input_activations"]["group_size"] = 32;
  c = parse(q);
  EXPECT_EQ(c.groups[0].block_n, 64);
  EXPECT_EQ(c.groups[0].block_k, 32);
  EXPECT_EQ(c.groups[0].activation, ActivationScheme::kDynamic);

  // The presets by name.
  for (const auto& [name, per_tensor, block, scheme] :
       std::vector<std::tuple<std::string, bool, int64_t, ActivationScheme>>{
           {"FP8", true, 0, ActivationScheme::kStatic},
           {"fp8_dynamic", false, 0, ActivationScheme::kDynamic},
           {"FP8_BLOCK", false, 128, ActivationScheme::kDynamic}}) {
    q = fp8_dynamic();
    q["config_groups"] = {{name, {"Linear"}}};
    c = parse(q);
    SCOPED_TRACE(name);
    ASSERT_EQ(c.groups.size(), 1u);
    EXPECT_TRUE(c.groups[0].fp8);
    EXPECT_EQ(c.groups[0].per_tensor, per_tensor);
    EXPECT_EQ(c.groups[0].block_n, block);
    EXPECT_EQ(c.groups[0].block_k, block);
    EXPECT_EQ(c.groups[0].activation, scheme);
  }

  // mixed-precision: an integer group and an FP8 one, each with its format.
  q = fp8_dynamic();
  q["format"] = "mixed-precision";
  q["config_groups"]["group_0"]["targets"] = {"re:.*mlp.*"};
  q["config_groups"]["group_1"] = json::parse(R"({"targets": ["Linear"], "format": "pack-quantized",
      "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", "group_size": 32}})");
  c = parse(q);
  ASSERT_EQ(c.groups.size(), 2u);
  EXPECT_TRUE(c.groups[0].fp8);
  EXPECT_FALSE(c.groups[1].fp8);
  EXPECT_EQ(c.groups[1].bits, 4);
  EXPECT_EQ(ct_group_of(c, "model.layers.0.mlp.up_proj", true), &c.groups[0]);
  EXPECT_EQ(ct_group_of(c, "model.layers.0.self_attn.q_proj", true), &c.groups[1]);
}

TEST(CtFp8Config, RefusesWhatTheFp8PathCannotComputeNamingTheField) {
  const std::string g = "config_groups.group_0.";
  const std::vector<std::pair<std::function<void(json&, json&, json&)>, std::string>> cases = {
      {[](json&, json&, json& x) { x = nullptr; }, g + "input_activations is missing: FP8 weight-only (W8A16)"},
      {[](json&, json& w, json&) { w["num_bits"] = 4; }, g + "weights.num_bits 4"},
      {[](json&, json& w, json&) { w["type"] = "int"; }, g + "weights.type 'int' is not supported for float-quantized"},
      {[](json&, json&, json& x) { x["type"] = "int"; }, g + "input_activations.type 'int'"},
      {[](json&, json& w, json&) { w["symmetric"] = false; }, g + "weights.symmetric false"},
      {[](json&, json&, json& x) { x["symmetric"] = false; }, g + "input_activations.symmetric false"},
      {[](json&, json& w, json&) { w["strategy"] = "group", w["group_size"] = 128; }, g + "weights.strategy 'group'"},
      {[](json&, json& w, json&) { w["group_size"] = 128; }, g + "weights.group_size 128 contradicts strategy"},
      {[](json&, json& w, json&) { w["dynamic"] = true; }, g + "weights.dynamic true"},
      {[](json&, json& w, json&) { w["strategy"] = "block"; }, g + "weights.block_structure is missing"},
      {[](json&, json& w, json&) { w["strategy"] = "block", w["block_structure"] = {128}; },
       g + "weights.block_structure [128]"},
      {[](json&, json& w, json&) { w["block_structure"] = {128, 128}; }, g + "weights.block_structure is not supported"},
      {[](json&, json& w, json&) { w["actorder"] = "group"; }, g + "weights.actorder \"group\""},
      {[](json&, json& w, json&) { w["scale_dtype"] = "torch.float64"; }, g + "weights.scale_dtype 'torch.float64'"},
      {[](json&, json& w, json&) { w["zp_dtype"] = "torch.uint4"; }, g + "weights.zp_dtype 'torch.uint4'"},
      {[](json&, json& w, json&) { w["rounding"] = "stochastic"; }, g + "weights.rounding is not supported"},
      {[](json&, json&, json& x) { x["strategy"] = "tensor"; },
       g + "input_activations.dynamic true is not supported with strategy 'tensor'"},
      {[](json&, json&, json& x) { x["dynamic"] = false; },
       g + "input_activations.dynamic false is not supported with strategy 'token'"},
      {[](json&, json&, json& x) { x["dynamic"] = "local"; }, g + "input_activations.dynamic \"local\""},
      {[](json&, json&, json& x) { x["strategy"] = "channel"; }, g + "input_activations.strategy 'channel'"},
      {[](json&, json&, json& x) { x["strategy"] = "group", x["group_size"] = 128; },
       g + "input_activations.strategy 'group' with group_size 128 is not supported beside weights of strategy"},
      {[](json&, json& w, json& x) {
         w["strategy"] = "block", w["block_structure"] = {128, 128}, x["strategy"] = "group", x["group_size"] = 64;
       },
       g + "input_activations.strategy 'group' with group_size 64"},
      {[](json&, json& w, json&) { w["strategy"] = "block", w["block_structure"] = {128, 128}; },
       g + "input_activations.strategy 'token' is not supported beside block weights"},
      {[](json&, json&, json& x) { x["block_structure"] = {1, 128}; }, g + "input_activations.block_structure"},
      {[](json& q, json&, json&) { q["config_groups"]["group_0"]["output_activations"] = json::object(); },
       g + "output_activations is not supported"},
      {[](json& q, json&, json&) {
         q["kv_cache_scheme"] = json::parse(R"({"num_bits": 8, "type": "float", "strategy": "attn_head"})");
       },
       "kv_cache_scheme.strategy 'attn_head' is not supported"},  // the other values: kv_cache_scheme_test.cpp
      {[](json& q, json&, json&) { q["format"] = "int-quantized", q["config_groups"]["group_0"].erase("format"); },
       "format 'int-quantized' is not supported"},
      {[](json& q, json&, json&) { q["config_groups"]["group_0"]["format"] = "pack-quantized"; },
       g + "input_activations is not supported for pack-quantized"},
      {[](json& q, json&, json&) { q["format"] = "mixed-precision", q["config_groups"]["group_0"].erase("format"); },
       g + "format is missing"},
      {[](json& q, json&, json&) { q["config_groups"] = {{"FP8", {"Linear"}}}, q["format"] = "pack-quantized"; },
       "config_groups.FP8 names preset scheme 'FP8', which is stored float-quantized, under format 'pack-quantized'"},
      {[](json& q, json&, json&) { q["config_groups"] = {{"W4A16", {"Linear"}}}; },
       "config_groups.W4A16 names preset scheme 'W4A16', which is stored pack-quantized, under format "
       "'float-quantized'"},
      {[](json& q, json&, json&) { q["config_groups"] = {{"NVFP4", {"Linear"}}}; }, "preset scheme 'NVFP4'"},
      {[](json& q, json&, json&) { q["quantization_status"] = "calibration"; }, "quantization_status 'calibration'"},
      {[](json& q, json&, json&) {  // frozen: only where every group is FP8 (an e4m3 weight marks it stored)
         q["quantization_status"] = "frozen";
         q["config_groups"]["group_1"] = json::parse(R"({"targets": ["re:.*mlp.*"], "format": "pack-quantized",
             "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32}})");
       },
       "quantization_status 'frozen'"},
  };
  for (const auto& [edit, needle] : cases) {
    json q = fp8_dynamic();
    json& group = q["config_groups"]["group_0"];
    json w = group["weights"], x = group["input_activations"];
    edit(q, w, x);
    if (q["config_groups"].contains("group_0")) {
      q["config_groups"]["group_0"]["weights"] = w;
      q["config_groups"]["group_0"]["input_activations"] = x;
    }
    const std::string e = error_of([&] { parse(q); });
    EXPECT_NE(e.find(needle), std::string::npos) << needle << " -> " << e;
    EXPECT_NE(e.find("/m/config.json"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace zinfer::gpu::quant
