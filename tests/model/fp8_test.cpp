// FP8 W8A8 at the level of one layer (gpu/quant/fp8.h, fp8_checkpoint.h, gpu/cpu/fp8_matrix.h)
// against tests/data/models/fp8_cases (tools/fixtures/make_fp8_fixtures.py, numpy from the
// format's definition): all 256 e4m3fn codes decode to numpy's values, rounding to e4m3 gives
// numpy's codes (ties to even, subnormals, saturation, NaN), each layer's dequantized weight equals
// numpy's bit for bit, the CPU product equals numpy's float64 W8A8 within float32 rounding, and
// every fp8 setting the loader cannot honour is refused naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "fp8_reference.h"
#include "fp8_case_check.h"
#include "gpu/cpu/fp8_matrix.h"
#include "gpu/model_config.h"
#include "gpu/quant/fp8.h"
#include "gpu/quant/fp8_checkpoint.h"
#include "gpu/quant/fp8_online.h"
#include "gpu/quant/quant_config.h"
#include "gpu/safetensors.h"
#include "test_util.h"

namespace zinfer::gpu::quant {
namespace {

namespace fs = std::filesystem;
const fs::path kCases = fs::path(ZINFER_SOURCE_DIR) / "tests/data/models/fp8_cases";

TEST(Fp8E4m3, EveryCodeDecodesToItsValue) {
  const WeightSet ws(kCases.string());
  const std::vector<float> want = values_of<float>(ws.get("e4m3.values"));
  ASSERT_EQ(want.size(), 256u);
  for (int c = 0; c < 256; ++c) {
    const float got = e4m3_to_float(uint8_t(c));
    if (std::isnan(want[size_t(c)])) {
      EXPECT_TRUE(std::isnan(got)) << c;
      EXPECT_TRUE(c == 0x7F || c == 0xFF) << c;
    } else {
      EXPECT_EQ(got, want[size_t(c)]) << "code " << c;
      EXPECT_EQ(std::signbit(got), c >= 128) << c;
      EXPECT_EQ(got, float(test::e4m3_value(uint8_t(c)))) << c;
    }
  }
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));
}

TEST(Fp8E4m3, RoundsToTheNearestEvenAndSaturates) {
  const WeightSet ws(kCases.string());
  const std::vector<float> in = values_of<float>(ws.get("e4m3.inputs"));
  const std::vector<uint8_t> codes = values_of<uint8_t>(ws.get("e4m3.codes"));
  ASSERT_EQ(in.size(), codes.size());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(int(float_to_e4m3(in[i])), int(codes[i])) << "input " << in[i];
  // A few by hand: ties go to the even code, overflow saturates, NaN stays NaN.
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);            // between 1 (0x38) and 1.125 (0x39)
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3A);            // between 1.125 and 1.25: up, to the even code
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -10)), 0x00);  // half the smallest subnormal: to zero
  EXPECT_EQ(float_to_e4m3(3 * std::ldexp(1.0f, -10)), 0x02);
  EXPECT_EQ(float_to_e4m3(464.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-1e30f), 0xFE);
  EXPECT_EQ(float_to_e4m3(INFINITY), 0x7E);
  EXPECT_EQ(float_to_e4m3(NAN) & 0x7F, 0x7F);
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
  // Every value is a fixed point; every midpoint between neighbours goes to the even one.
  for (int c = 0; c < 127; ++c) {
    EXPECT_EQ(float_to_e4m3(e4m3_to_float(uint8_t(c))), c);
    EXPECT_EQ(float_to_e4m3(-e4m3_to_float(uint8_t(c))), c | 0x80);
    if (c < 126) {
      const float mid = (e4m3_to_float(uint8_t(c)) + e4m3_to_float(uint8_t(c + 1))) / 2;
      EXPECT_EQ(float_to_e4m3(mid), c % 2 == 0 ? c : c + 1) << mid;
      EXPECT_EQ(float_to_e4m3(std::nextafter(mid, 0.0f)), c) << mid;
      EXPECT_EQ(float_to_e4m3(std::nextafter(mid, 1000.0f)), c + 1) << mid;
    }
  }
}

TEST(Fp8Layer, EveryCaseIsTheFormatsWeightAndProduct) {
  const WeightSet ws(kCases.string());
  std::ifstream in(kCases / "cases.json");
  const nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_EQ(cases.size(), 5u);
  for (const auto& [name, c] : cases.items()) {
    SCOPED_TRACE(name);
    const QuantConfig config = parse_quant_config(c["quantization_config"].dump(), "cases.json");
    ASSERT_EQ(config.method, Method::kFp8);
    const int64_t N = c["out_features"], K = c["in_features"];
    const Fp8Weight w = read_fp8_layer(ws, config, name + ".", {N, K});
    expect_matches_case(ws, name, w);
  }
}

TEST(Fp8Layer, SlicesAndStacksKeepTheirScales) {
  const WeightSet ws(kCases.string());
  const QuantConfig config = parse_quant_config(R"({"quant_method":"fp8","weight_block_size":[128,128]})", "c");
  const Fp8Weight w = read_fp8_layer(ws, config, "block_dynamic.", {136, 200});
  EXPECT_EQ(w.group, 128);
  EXPECT_EQ(w.groups(), 2);
  const Fp8Weight right = w.slice(3, 5, 128, 72, "t");
  for (int64_t n = 0; n < 5; ++n) EXPECT_EQ(right.scale_at(n, 0), w.scale_at(3 + n, 1));
  EXPECT_NE(error_of([&] { (void)w.slice(0, 5, 64, 64, "block_dynamic.weight"); }).find("scale blocks of 128"),
            std::string::npos);
  Fp8Weight stacked = w.slice(0, 2, 0, 200, "a");
  stacked.append(w.slice(130, 6, 0, 200, "b"), "b");  // rows past the 128-row block boundary
  EXPECT_EQ(stacked.rows, 8);
  EXPECT_EQ(stacked.scale_at(2, 1), w.scale_at(130, 1));
  const Fp8Weight per_token = read_fp8_layer(
      ws, parse_quant_config(R"({"quant_method":"fp8"})", "c"), "channel_dynamic.", {24, 96});
  EXPECT_NE(error_of([&] { stacked.append(per_token.slice(0, 1, 0, 96, "x"), "x"); }).find("columns"), std::string::npos);
}

TEST(Fp8Layer, OnlineQuantizationIsPerChannelAmax) {
  std::vector<float> w = {0.5f, -2.0f, 1.0f, 0.0f, 0.0f, 0.0f, 448.0f, 1e-3f, -3.0f};
  const Fp8Weight f = quantize_per_channel(w.data(), 3, 3);
  EXPECT_EQ(f.group, 3);
  EXPECT_EQ(f.scale[0], 2.0f / 448.0f);
  EXPECT_EQ(f.scale[1], 1e-10f / 448.0f);  // a zero row keeps a finite scale
  EXPECT_EQ(f.scale[2], 1.0f);
  EXPECT_EQ(f.q[1], float_to_e4m3(-2.0f / (2.0f / 448.0f)));
  EXPECT_EQ(e4m3_to_float(f.q[1]), -448.0f);
  EXPECT_EQ(f.q[3], 0);
  EXPECT_EQ(e4m3_to_float(f.q[6]), 448.0f);
}

TEST(Fp8Config, ReadsTheFormatsKeys) {
  QuantConfig c = parse_quant_config(
      R"({"quant_method":"fp8","activation_scheme":"static","ignored_layers":["lm_head","model.layers.0.mlp.down_proj"]})",
      "config.json");
  EXPECT_EQ(c.method, Method::kFp8);
  EXPECT_EQ(c.activation_scheme, ActivationScheme::kStatic);
  EXPECT_EQ(c.block_n, 0);
  EXPECT_EQ(c.ignored_layers.size(), 2u);
  c = parse_quant_config(R"({"quant_method":"fp8","activation_scheme":"dynamic","fmt":"e4m3",
                             "weight_block_size":[128,128],"modules_to_not_convert":["lm_head"]})",
                         "config.json");
  EXPECT_EQ(c.activation_scheme, ActivationScheme::kDynamic);
  EXPECT_EQ(c.block_n, 128);
  EXPECT_EQ(c.block_k, 128);
  EXPECT_EQ(c.modules_to_not_convert, std::vector<std::string>{"lm_head"});
}

TEST(Fp8Config, RefusesWhatItCannotHonourByName) {
  auto refused = [](const std::string& json, const std::string& needle) {
    const std::string e = error_of([&] { parse_quant_config(json, "config.json"); });
    EXPECT_NE(e.find(needle), std::string::npos) << json << " -> " << e;
    EXPECT_NE(e.find("config.json"), std::string::npos) << e;
  };
  refused(R"({"quant_method":"fp8","activation_scheme":"per_group"})", "activation_scheme 'per_group'");
  refused(R"({"quant_method":"fp8","fmt":"e5m2"})", "fmt 'e5m2'");
  refused(R"({"quant_method":"fp8","weight_block_size":[128]})", "weight_block_size [128]");
  refused(R"({"quant_method":"fp8","weight_block_size":[0,128]})", "weight_block_size");
  refused(R"({"quant_method":"fp8","activation_scheme":"static","weight_block_size":[128,128]})",
          "activation_scheme 'static' with weight_block_size");
  refused(R"({"quant_method":"fp8","kv_cache_scheme":{}})", "kv_cache_scheme.type 'int' (the default)");
  refused(R"({"quant_method":"fp8","kv_cache_scheme":"dynamic"})", "kv_cache_scheme 'dynamic' is not supported");
  refused(R"({"quant_method":"fp8","bits":4})", "bits 4");
  refused(R"({"quant_method":"fp8","group_size":128})", "group_size");
  refused(R"({"quant_method":"fp8","dequantize":true})", "dequantize true");
  refused(R"({"quant_method":"fp8","ignored_layers":"lm_head"})", "ignored_layers is not a list");
}

TEST(Fp8Setting, AutoFp8AndNone) {
  const QuantConfig dense;
  const QuantConfig fp8 = parse_quant_config(R"({"quant_method":"fp8"})", "config.json");
  const QuantConfig gptq = parse_quant_config(R"({"quant_method":"gptq","bits":4,"group_size":128})", "config.json");
  EXPECT_FALSE(apply_quantization_setting(dense, "auto", "c").quantized());
  EXPECT_EQ(apply_quantization_setting(gptq, "auto", "c").method, Method::kGptq);
  const QuantConfig online = apply_quantization_setting(dense, "fp8", "c");
  EXPECT_EQ(online.method, Method::kFp8);
  EXPECT_TRUE(online.online);
  EXPECT_EQ(online.activation_scheme, ActivationScheme::kDynamic);
  EXPECT_FALSE(apply_quantization_setting(fp8, "fp8", "c").online);  // an fp8 checkpoint as it is
  std::string e = error_of([&] { apply_quantization_setting(gptq, "fp8", "m/config.json"); });
  EXPECT_NE(e.find("'fp8'"), std::string::npos) << e;
  EXPECT_NE(e.find("'gptq'"), std::string::npos) << e;
  EXPECT_NE(e.find("m/config.json"), std::string::npos) << e;
  e = error_of([&] { apply_quantization_setting(fp8, "none", "m/config.json"); });
  EXPECT_NE(e.find("'none'"), std::string::npos) << e;
  EXPECT_NE(e.find("'fp8'"), std::string::npos) << e;
  EXPECT_FALSE(apply_quantization_setting(dense, "none", "c").quantized());
  e = error_of([&] { apply_quantization_setting(dense, "int4", "c"); });
  EXPECT_NE(e.find("'int4'"), std::string::npos) << e;
}

}  // namespace
}  // namespace zinfer::gpu::quant
