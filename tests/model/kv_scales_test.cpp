// The per-layer FP8 KV cache scales read from a checkpoint as vLLM reads them
// (gpu/quant/kv_scales.h): k_scale/v_scale, the older kv_scale, compressed-tensors'
// k_proj/v_proj.output_scale, none (1.0), and the errors that name a malformed or unpaired scale,
// two namings in one layer or a zero point that is not zero; and the device that has no KV bytes
// refusing the setting.
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "gpu/backend.h"
#include "gpu/quant/kv_scales.h"
#include "tests/model/kv_scale_folder.h"

namespace zinfer::gpu {
namespace {

using test::add_scales;
using test::attn;
using test::bf16_scalar;
using test::Entry;
using test::f32_scalar;
using test::Folder;
using test::ScratchDir;
using test::tiny;
using test::write_model;

std::string load_error(const ScratchDir& dir) {
  try {
    quant::read_kv_scales(WeightSet(dir.str()), 2, dir.str(), false);
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "";
}

TEST(KvScales, MissingScalesAreOne) {
  ScratchDir dir("kvs");
  write_model(dir, tiny(Architecture::kLlama), 1);
  const quant::KvScales s = quant::read_kv_scales(WeightSet(dir.str()), 2, dir.str(), false);
  EXPECT_EQ(s.k, (std::vector<float>{1.0f, 1.0f}));
  EXPECT_EQ(s.v, (std::vector<float>{1.0f, 1.0f}));
  EXPECT_EQ(s.missing, 2);
}

TEST(KvScales, KAndVScalesAndTheOlderKvScale) {
  ScratchDir dir("kvs");
  write_model(dir, tiny(Architecture::kLlama), 1);
  add_scales(dir, 0.05f, 0.02f, 0.03125f);
  const quant::KvScales s = quant::read_kv_scales(WeightSet(dir.str()), 2, dir.str(), false);
  EXPECT_EQ(s.k, (std::vector<float>{0.05f, 0.03125f}));
  EXPECT_EQ(s.v, (std::vector<float>{0.02f, 0.03125f}));  // kv_scale is V's scale too
  EXPECT_EQ(s.missing, 0);
}

// compressed-tensors' kv_cache_scheme stored its scales as the output scales of k_proj and v_proj
// ([1], the weights' dtype) until it moved them to self_attn.k_scale / v_scale: both read as K's
// and V's, beside a layer of the newer naming, an all-zero zero point beside them accepted.
TEST(KvScales, CompressedTensorsOutputScalesAreKAndV) {
  ScratchDir dir("kvs");
  write_model(dir, tiny(Architecture::kLlama), 1);
  Folder f(dir.path());
  f.tensors[attn(0, "k_proj.output_scale")] = f32_scalar(0.0625f, {1});
  f.tensors[attn(0, "v_proj.output_scale")] = bf16_scalar(0.046875f, {1});
  f.tensors[attn(0, "k_proj.output_zero_point")] = Entry{DType::kF8E4M3, {1}, std::vector<std::byte>(1)};
  f.tensors[attn(0, "v_proj.output_zero_point")] = f32_scalar(0, {1});
  f.tensors[attn(1, "k_scale")] = f32_scalar(0.5f);
  f.tensors[attn(1, "v_scale")] = f32_scalar(0.25f);
  f.write(dir.path());
  const quant::KvScales s = quant::read_kv_scales(WeightSet(dir.str()), 2, dir.str(), false);
  EXPECT_EQ(s.k, (std::vector<float>{0.0625f, 0.5f}));
  EXPECT_EQ(s.v, (std::vector<float>{0.046875f, 0.25f}));
  EXPECT_EQ(s.missing, 0);
}

TEST(KvScales, AMalformedOrUnpairedScaleIsNamed) {
  struct Case {
    const char* what;
    std::function<void(Folder&)> edit;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {"two numbers", [](Folder& f) { f.tensors[attn(0, "k_scale")] = Entry{DType::kF32, {2}, std::vector<std::byte>(8)};
                                      f.tensors[attn(0, "v_scale")] = f32_scalar(1); },
       {attn(0, "k_scale"), "per-tensor"}},
      {"an integer", [](Folder& f) { f.tensors[attn(1, "kv_scale")] = Entry{DType::kI32, {}, std::vector<std::byte>(4)}; },
       {attn(1, "kv_scale"), "one float"}},
      {"negative", [](Folder& f) { f.tensors[attn(0, "k_scale")] = f32_scalar(-0.5f);
                                   f.tensors[attn(0, "v_scale")] = f32_scalar(1); },
       {attn(0, "k_scale"), "finite positive"}},
      {"NaN", [](Folder& f) { f.tensors[attn(0, "k_scale")] = f32_scalar(1);
                              f.tensors[attn(0, "v_scale")] = f32_scalar(std::numeric_limits<float>::quiet_NaN()); },
       {attn(0, "v_scale"), "finite positive"}},
      {"zero", [](Folder& f) { f.tensors[attn(1, "kv_scale")] = f32_scalar(0); }, {attn(1, "kv_scale")}},
      {"k without v", [](Folder& f) { f.tensors[attn(1, "k_scale")] = f32_scalar(1); },
       {attn(1, "v_scale"), "missing"}},
      {"v without k", [](Folder& f) { f.tensors[attn(0, "v_scale")] = f32_scalar(1); },
       {attn(0, "k_scale"), "missing"}},
      {"kv beside k", [](Folder& f) { f.tensors[attn(0, "kv_scale")] = f32_scalar(1);
                                      f.tensors[attn(0, "k_scale")] = f32_scalar(1);
                                      f.tensors[attn(0, "v_scale")] = f32_scalar(1); },
       {attn(0, "kv_scale"), attn(0, "k_scale")}},
      // compressed-tensors' naming: the same rules, and one naming per layer.
      {"output k without v", [](Folder& f) { f.tensors[attn(1, "k_proj.output_scale")] = f32_scalar(1, {1}); },
       {attn(1, "v_proj.output_scale"), "missing"}},
      {"output v without k", [](Folder& f) { f.tensors[attn(0, "v_proj.output_scale")] = f32_scalar(1, {1}); },
       {attn(0, "k_proj.output_scale"), "missing"}},
      {"output negative", [](Folder& f) { f.tensors[attn(0, "k_proj.output_scale")] = f32_scalar(-0.5f, {1});
                                          f.tensors[attn(0, "v_proj.output_scale")] = f32_scalar(1, {1}); },
       {attn(0, "k_proj.output_scale"), "finite positive"}},
      {"output infinite", [](Folder& f) { f.tensors[attn(1, "k_proj.output_scale")] = f32_scalar(1, {1});
                                          f.tensors[attn(1, "v_proj.output_scale")] =
                                              f32_scalar(std::numeric_limits<float>::infinity(), {1}); },
       {attn(1, "v_proj.output_scale"), "finite positive"}},
      {"output per channel", [](Folder& f) {
         f.tensors[attn(0, "k_proj.output_scale")] = Entry{DType::kF32, {4, 1}, std::vector<std::byte>(16)};
         f.tensors[attn(0, "v_proj.output_scale")] = f32_scalar(1, {1}); },
       {attn(0, "k_proj.output_scale"), "per-tensor"}},
      {"output in fp8", [](Folder& f) {
         f.tensors[attn(0, "k_proj.output_scale")] = f32_scalar(1, {1});
         f.tensors[attn(0, "v_proj.output_scale")] = Entry{DType::kF8E4M3, {1}, std::vector<std::byte>(1, std::byte{0x38})}; },
       {attn(0, "v_proj.output_scale"), "one float"}},
      {"output beside k and v", [](Folder& f) { f.tensors[attn(0, "k_scale")] = f32_scalar(1);
                                                f.tensors[attn(0, "v_scale")] = f32_scalar(1);
                                                f.tensors[attn(0, "k_proj.output_scale")] = f32_scalar(1, {1});
                                                f.tensors[attn(0, "v_proj.output_scale")] = f32_scalar(1, {1}); },
       {attn(0, "k_proj.output_scale"), attn(0, "k_scale"), "one of them"}},
      {"output v beside v", [](Folder& f) { f.tensors[attn(1, "v_scale")] = f32_scalar(1);
                                            f.tensors[attn(1, "v_proj.output_scale")] = f32_scalar(1, {1}); },
       {attn(1, "v_proj.output_scale"), attn(1, "v_scale")}},
      {"output beside kv", [](Folder& f) { f.tensors[attn(1, "kv_scale")] = f32_scalar(1);
                                           f.tensors[attn(1, "k_proj.output_scale")] = f32_scalar(1, {1});
                                           f.tensors[attn(1, "v_proj.output_scale")] = f32_scalar(1, {1}); },
       {attn(1, "k_proj.output_scale"), attn(1, "kv_scale")}},
      {"a zero point not zero", [](Folder& f) {
         f.tensors[attn(0, "k_proj.output_scale")] = f32_scalar(1, {1});
         f.tensors[attn(0, "v_proj.output_scale")] = f32_scalar(1, {1});
         f.tensors[attn(0, "v_proj.output_zero_point")] = f32_scalar(3, {1}); },
       {attn(0, "v_proj.output_zero_point"), "is not zero"}},
      {"a zero point in int32", [](Folder& f) {
         f.tensors[attn(0, "k_proj.output_scale")] = f32_scalar(1, {1});
         f.tensors[attn(0, "v_proj.output_scale")] = f32_scalar(1, {1});
         f.tensors[attn(0, "k_proj.output_zero_point")] = Entry{DType::kI32, {1}, std::vector<std::byte>(4)}; },
       {attn(0, "k_proj.output_zero_point"), "dtype I32 for a zero point"}},
      {"a zero point without its scale", [](Folder& f) {
         f.tensors[attn(1, "k_proj.output_zero_point")] = f32_scalar(0, {1}); },
       {attn(1, "k_proj.output_zero_point"), attn(1, "k_proj.output_scale"), "does not have"}},
  };
  for (const Case& c : cases) {
    ScratchDir dir("kvs");
    write_model(dir, tiny(Architecture::kLlama), 1);
    Folder f(dir.path());
    c.edit(f);
    f.write(dir.path());
    const std::string e = load_error(dir);
    EXPECT_FALSE(e.empty()) << c.what << " accepted";
    for (const std::string& n : c.needles) EXPECT_NE(e.find(n), std::string::npos) << c.what << ": " << n << " not in: " << e;
  }
}

TEST(KvFp8, TheSyntheticDeviceRefusesIt) {
  BackendOptions o;
  o.model_dir = "unused";
  o.device = "synthetic";
  o.num_gpu_blocks = 8;
  o.kv_cache_dtype = KvCacheDtype::kFp8;
  try {
    make_backend(o);
    ADD_FAILURE() << "synthetic accepted kv_cache_dtype fp8";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kv_cache_dtype"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zinfer::gpu
