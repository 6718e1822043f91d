// A checkpoint with a kv_cache_scheme end to end on the CPU backend (gpu/quant/kv_cache_scheme.h,
// kv_scales.h): the committed FP8 W8A8, W4A16 and fp8 fixtures given a kv_cache_scheme and
// non-1 k/v scales in compressed-tensors' older naming (k_proj/v_proj.output_scale) compute with
// kv_cache_dtype fp8 exactly what the same checkpoint with vLLM's self_attn.k_scale / v_scale
// computes, and not what the all-1.0 scales compute; the FP8 W8A8 one is the float64 reference
// whose K and V are rounded to e4m3 through those scales. Under kv_cache_dtype auto the scales go
// unused (the float32 cache of the checkpoint without them, logit for logit) and the log says so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "fp8_model_util.h"
#include "tests/model/kv_scale_folder.h"

namespace zinfer::gpu {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::attn;
using test::Entry;
using test::Folder;
using test::f32_scalar;

// Per layer of the 2-layer fixtures: K's and V's scales, none a power of two (a power of two
// only shifts e4m3's exponent and would round as 1.0 does, away from the format's edges).
const std::vector<float> kK = {0.0371f, 0.0523f}, kV = {0.0195f, 0.0298f};

json llm_compressor_scheme() {
  return json::parse(R"({"num_bits": 8, "type": "float", "symmetric": true, "group_size": null, "strategy": "tensor",
                         "block_structure": null, "dynamic": false, "actorder": null, "observer": "minmax",
                         "observer_kwargs": {}})");
}


enum class Naming { kNone, kOutputScale, kSelfAttn };

// `fixture` with `scheme` as its kv_cache_scheme (null: none) and kK / kV under `naming`, written
// to `dir`.
void write_variant(const std::string& fixture, const json& scheme, Naming naming, const test::ScratchDir& dir) {
  Folder f(test::kModelFixtures / fixture);
  f.config["quantization_config"]["kv_cache_scheme"] = scheme;
  for (int l = 0; l < 2; ++l) {
    if (naming == Naming::kOutputScale) {  // as the library stored them: shape [1]
      f.tensors[attn(l, "k_proj.output_scale")] = f32_scalar(kK[l], {1});
      f.tensors[attn(l, "v_proj.output_scale")] = f32_scalar(kV[l], {1});
    } else if (naming == Naming::kSelfAttn) {  // as vLLM names them: scalars
      f.tensors[attn(l, "k_scale")] = f32_scalar(kK[l], {});
      f.tensors[attn(l, "v_scale")] = f32_scalar(kV[l], {});
    }
  }
  f.write(dir.path());
  fs::copy_file(test::kModelFixtures / "llama" / "generation_config.json", dir.path() / "generation_config.json");
}

std::vector<float> logits(const test::ScratchDir& dir, KvCacheDtype dtype) {
  BackendOptions o;
  o.model_dir = dir.str();
  o.num_gpu_blocks = 16;
  o.num_threads = 2;
  o.kv_cache_dtype = dtype;
  return test::prompt_logits(*make_backend(o));
}

struct Checkpoint {
  const char* fixture;
  json scheme;
};

class KvCacheSchemeModel : public ::testing::TestWithParam<Checkpoint> {};

TEST_P(KvCacheSchemeModel, OutputScalesAreVllmsKAndVScales) {
  const Checkpoint& c = GetParam();
  test::ScratchDir output("kvct-out"), self_attn("kvct-self"), ones("kvct-ones");
  write_variant(c.fixture, c.scheme, Naming::kOutputScale, output);
  write_variant(c.fixture, c.scheme, Naming::kSelfAttn, self_attn);
  write_variant(c.fixture, c.scheme, Naming::kNone, ones);
  const std::vector<float> got = logits(output, KvCacheDtype::kFp8);
  const double vs_ones = test::worst_difference(got, logits(ones, KvCacheDtype::kFp8));
  std::printf("%s: max |logit(scales) - logit(1.0)| %.3e\n", c.fixture, vs_ones);
  EXPECT_EQ(got, logits(self_attn, KvCacheDtype::kFp8)) << "k_proj/v_proj.output_scale read unlike k_scale/v_scale";
  // Other scales round K and V differently (measured 0.2 to 0.3 of a logit here), far above the
  // float32 noise (~1e-6) that two runs of the same scales could differ by.
  EXPECT_GT(vs_ones, 1e-3) << "the checkpoint's scales changed nothing: they may not have been read";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KvCacheSchemeModel,
                         ::testing::Values(Checkpoint{"llama_ct_fp8", llm_compressor_scheme()},
                                           Checkpoint{"llama_ct", llm_compressor_scheme()},
                                           Checkpoint{"llama_fp8", "static"}),
                         [](const auto& info) { return std::string(info.param.fixture); });

// The FP8 W8A8 checkpoint with the scales is the float64 reference of the same W8A8 arithmetic
// whose K and V are rounded to e4m3 through kK / kV, and not the one rounded through 1.0.
TEST(KvCacheSchemeModel, IsTheReferenceWithKvRoundedThroughTheScales) {
  test::ScratchDir dir("kvct-ref");
  write_variant("llama_ct_fp8", llm_compressor_scheme(), Naming::kOutputScale, dir);
  BackendOptions o;
  o.model_dir = dir.str();
  o.num_gpu_blocks = 16;
  o.num_threads = 2;
  o.kv_cache_dtype = KvCacheDtype::kFp8;
  auto b = make_backend(o);
  const std::vector<float> got = test::prompt_logits(*b);
  const Folder f(dir.path());
  auto worst = [&](const std::vector<float>& ks, const std::vector<float>& vs) {
    test::ReferenceForward ref(b->config(), dir.str());
    const test::Fp8Reference fp8(dir.str(), f.config["quantization_config"]);
    ref.linear = [&](const std::string& w, const test::ReferenceForward::Mat& x) { return fp8(w, x); };
    ref.kv_cache = [&](int layer, bool is_v, double x) {
      const double s = is_v ? vs[size_t(layer)] : ks[size_t(layer)];
      return test::e4m3_round(x / s) * s;
    };
    const auto want = ref.logits(test::kFp8Prompt);
    const size_t V = size_t(b->config().vocab_size);
    double out = 0;
    for (size_t t = 0; t < want.size(); ++t)
      for (size_t v = 0; v < V; ++v) out = std::max(out, std::abs(double(got[t * V + v]) - want[t][v]));
    return out;
  };
  const double with_scales = worst(kK, kV), with_ones = worst({1, 1}, {1, 1});
  std::printf("max |logit - reference|: K/V rounded through the scales %.2e, through 1.0 %.2e\n", with_scales, with_ones);
  EXPECT_LT(with_scales, 1e-4);
  EXPECT_GT(with_ones, 10 * with_scales);
}

// kv_cache_dtype auto keeps the float32 cache, as vLLM's auto keeps the model dtype: the scales
// change nothing, and one line says that they go unused.
TEST(KvCacheSchemeModel, AutoLeavesTheScalesUnusedAndSaysSo) {
  test::ScratchDir plain("kvct-plain"), scheme("kvct-auto");
  write_variant("llama_ct_fp8", nullptr, Naming::kNone, plain);
  write_variant("llama_ct_fp8", llm_compressor_scheme(), Naming::kOutputScale, scheme);
  const std::vector<float> want = logits(plain, KvCacheDtype::kAuto);
  ::testing::internal::CaptureStderr();
  const std::vector<float> got = logits(scheme, KvCacheDtype::kAuto);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(got, want);
  EXPECT_NE(log.find("kv_cache_dtype auto: the KV cache holds float32"), std::string::npos) << log;
  EXPECT_NE(log.find(scheme.str() + "'s quantization_config.kv_cache_scheme"), std::string::npos) << log;
  ::testing::internal::CaptureStderr();
  logits(plain, KvCacheDtype::kAuto);
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("kv_cache_scheme"), std::string::npos);
}

}  // namespace
}  // namespace zinfer::gpu
