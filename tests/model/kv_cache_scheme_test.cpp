// A checkpoint's kv_cache_scheme (gpu/quant/kv_cache_scheme.h) in a compressed-tensors or fp8
// quantization_config: what vLLM loads (8-bit float, per-tensor, static, symmetric; AutoFP8's
// "static") is accepted and marks the config, with the library's defaults for fields left out;
// every other value of every field, and an unknown field, is refused naming the field and value.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/model_config.h"
#include "gpu/quant/kv_scales.h"
#include "gpu/quant/quant_config.h"
#include "tests/model/checkpoint_folder.h"

namespace zinfer::gpu::quant {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
const fs::path kFixtures = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models";

// The kv_cache_scheme llm-compressor writes (the library's QuantizationArgs, every field dumped).
json llm_compressor_scheme() {
  return json::parse(R"({"num_bits": 8, "type": "float", "symmetric": true, "group_size": null, "strategy": "tensor",
                         "block_structure": null, "dynamic": false, "actorder": null, "observer": "minmax",
                         "observer_kwargs": {}})");
}

// The quantization_config of a committed fixture (compressed-tensors FP8 W8A8 or W4A16, or fp8),
// as it is and with `scheme` as its kv_cache_scheme.
json config_of(const std::string& fixture) { return test::Folder(kFixtures / fixture).config["quantization_config"]; }
json with_scheme(const std::string& fixture, const json& scheme) {
  json q = config_of(fixture);
  q["kv_cache_scheme"] = scheme;
  return q;
}

QuantConfig parse(const json& q) { return parse_quant_config(q.dump(), "/m/config.json"); }

std::string error_of(const json& q) {
  try {
    parse(q);
  } catch (const ModelConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(KvCacheScheme, WhatVllmLoadsIsAccepted) {
  for (const char* fixture : {"llama_ct_fp8", "llama_ct", "llama_fp8"}) {
    EXPECT_FALSE(parse(config_of(fixture)).kv_cache_scheme) << fixture << " has no kv_cache_scheme";
    EXPECT_TRUE(parse(with_scheme(fixture, llm_compressor_scheme())).kv_cache_scheme) << fixture;
  }
  // The library's defaults for what is left out: 8 bits, symmetric, static, strategy tensor (no
  // group_size); upper case as the library lower-cases it; the scale dtypes it may write.
  const std::vector<json> accepted = {
      json::parse(R"({"type": "float"})"),
      json::parse(R"({"type": "FLOAT", "strategy": "TENSOR", "num_bits": 8})"),
      json::parse(R"({"type": "float", "dynamic": false, "actorder": false, "symmetric": true})"),
      json::parse(R"({"type": "float", "scale_dtype": "torch.bfloat16", "zp_dtype": null})"),
      json::parse(R"({"type": "float", "scale_dtype": "torch.float32", "zp_dtype": "torch.float8_e4m3fn"})"),
      json::parse(R"({"type": "float", "observer": "mse", "observer_kwargs": {"maxshrink": 0.2}})"),
  };
  for (const json& s : accepted) {
    EXPECT_TRUE(parse(with_scheme("llama_ct_fp8", s)).kv_cache_scheme) << s.dump();
    EXPECT_TRUE(parse(with_scheme("llama_fp8", s)).kv_cache_scheme) << s.dump();
  }
  // AutoFP8 writes the string "static" into a quant_method fp8 config.
  EXPECT_TRUE(parse(with_scheme("llama_fp8", "static")).kv_cache_scheme);
  // JSON null is no scheme.
  EXPECT_FALSE(parse(with_scheme("llama_ct_fp8", nullptr)).kv_cache_scheme);
}

TEST(KvCacheScheme, EveryOtherValueIsRefusedNamingTheField) {
  struct Case {
    std::function<void(json&)> edit;
    std::string needle;
  };
  const std::string p = "quantization_config.kv_cache_scheme.";
  const std::vector<Case> cases = {
      {[](json& s) { s["num_bits"] = 4; }, p + "num_bits 4 is not supported"},
      {[](json& s) { s["num_bits"] = 16; }, p + "num_bits 16 is not supported"},
      {[](json& s) { s["num_bits"] = "8"; }, p + "num_bits is not an integer"},
      {[](json& s) { s["type"] = "int"; }, p + "type 'int' is not supported"},
      {[](json& s) { s.erase("type"); }, p + "type 'int' (the default) is not supported"},
      {[](json& s) { s["type"] = 1; }, p + "type is not a string"},
      {[](json& s) { s["symmetric"] = false; }, p + "symmetric false is not supported"},
      {[](json& s) { s["symmetric"] = "true"; }, p + "symmetric is not a boolean"},
      {[](json& s) { s["strategy"] = "attn_head"; }, p + "strategy 'attn_head' is not supported"},
      {[](json& s) { s["strategy"] = "channel"; }, p + "strategy 'channel' is not supported"},
      {[](json& s) { s["strategy"] = "token"; }, p + "strategy 'token' is not supported"},
      {[](json& s) { s["strategy"] = "tensor_group"; }, p + "strategy 'tensor_group' is not supported"},
      {[](json& s) { s["strategy"] = "block"; }, p + "strategy 'block' is not supported"},
      {[](json& s) { s["strategy"] = 3; }, p + "strategy is not a string"},
      {[](json& s) { s["group_size"] = 128; }, p + "group_size 128 is not supported"},
      {[](json& s) { s["group_size"] = -1; }, p + "group_size -1 is not supported"},
      {[](json& s) { s["group_size"] = "all"; }, p + "group_size is not an integer"},
      {[](json& s) {
         s.erase("strategy");
         s["group_size"] = 64;
       },
       p + "group_size 64 is not supported"},
      {[](json& s) { s["block_structure"] = {128, 128}; }, p + "block_structure [128,128] is not supported"},
      {[](json& s) { s["dynamic"] = true; }, p + "dynamic true is not supported"},
      {[](json& s) { s["dynamic"] = "local"; }, p + "dynamic \"local\" is not supported"},
      {[](json& s) { s["actorder"] = "group"; }, p + "actorder \"group\" is not supported"},
      {[](json& s) { s["actorder"] = true; }, p + "actorder true is not supported"},
      {[](json& s) { s["scale_dtype"] = "torch.float64"; }, p + "scale_dtype 'torch.float64' is not supported"},
      {[](json& s) { s["zp_dtype"] = "torch.uint4"; }, p + "zp_dtype 'torch.uint4' is not supported"},
      {[](json& s) { s["rounding"] = "stochastic"; }, p + "rounding is not supported"},
      {[](json& s) { s = json::array({8}); }, "quantization_config.kv_cache_scheme [8] is not supported"},
      {[](json& s) { s = "static"; }, "quantization_config.kv_cache_scheme 'static' is not supported"},
  };
  for (const Case& c : cases) {
    json scheme = llm_compressor_scheme();
    c.edit(scheme);
    for (const char* fixture : {"llama_ct_fp8", "llama_ct", "llama_fp8"}) {
      if (scheme == "static" && std::string(fixture) == "llama_fp8") continue;  // AutoFP8's, accepted above
      const std::string e = error_of(with_scheme(fixture, scheme));
      EXPECT_NE(e.find(c.needle), std::string::npos) << fixture << ": " << scheme.dump() << " -> " << e;
      EXPECT_NE(e.find("/m/config.json"), std::string::npos) << e;
    }
  }
  // fp8 configs: AutoFP8 wrote only "static".
  EXPECT_NE(error_of(with_scheme("llama_fp8", "dynamic")).find("kv_cache_scheme 'dynamic' is not supported"),
            std::string::npos);
  // The integer formats have no KV cache scheme at all.
  for (const char* method : {R"({"quant_method": "gptq", "bits": 4, "group_size": 128})",
                             R"({"quant_method": "awq", "bits": 4, "group_size": 128})"}) {
    json q = json::parse(method);
    q["kv_cache_scheme"] = llm_compressor_scheme();
    EXPECT_NE(error_of(q).find("quantization_config.kv_cache_scheme is not supported"), std::string::npos) << method;
  }
}

// Under kv_cache_dtype auto the scales of a checkpoint with a kv_cache_scheme go unused, and the
// line that says so names the cache's type and the checkpoint; without a scheme there is no line.
TEST(KvCacheScheme, AutoSaysTheScalesAreUnused) {
  const std::string line = unused_kv_scales(parse(with_scheme("llama_ct_fp8", llm_compressor_scheme())), "bf16", "/m");
  for (const char* needle : {"kv_cache_dtype auto", "holds bf16", "/m's quantization_config.kv_cache_scheme",
                             "unused", "kv_cache_dtype fp8 uses them"})
    EXPECT_NE(line.find(needle), std::string::npos) << needle << " not in: " << line;
  EXPECT_EQ(unused_kv_scales(parse(config_of("llama_ct_fp8")), "bf16", "/m"), "");
}

}  // namespace
}  // namespace zinfer::gpu::quant
