// compressed-tensors float-quantized checkpoints end to end on the CPU backend: llama_ct_fp8
// (attention per-tensor with static inputs in a "re:" group, the MLP per-channel with dynamic
// per-token inputs in a "Linear" group, bf16 LM head in ignore) computes the float64 reference of
// the same W8A8 arithmetic within 1e-4 and stays near the float32 model it was made from; each of
// its groups is the quant_method "fp8" checkpoint of the same tensors, logit for logit, on one rank
// and on two; an FP8 group mixed with an int4 pack-quantized
// one is the fp8 checkpoint of the FP8 layers beside the int4 layers' dequantized weights; and a
// checkpoint that disagrees with its config groups is refused naming the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "fp8_model_util.h"
#include "gpu/quant/checkpoint_reader.h"
#include "gpu/quant/fp8.h"

namespace zinfer::gpu {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::Entry;
using test::Folder;
using test::load_error;
const fs::path kFixtures = test::kModelFixtures;
const char* const kAttention[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"};
const char* const kMlp[] = {"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"};

std::vector<std::string> modules_of(const char* const (&names)[4]) { return {names, names + 4}; }
std::vector<std::string> modules_of(const char* const (&names)[3]) { return {names, names + 3}; }

// Every layer's module name ("model.layers.1.mlp.up_proj") of the given kinds.
std::vector<std::string> every_layer(const std::vector<std::string>& kinds) {
  std::vector<std::string> out;
  for (int l = 0; l < 2; ++l)
    for (const std::string& k : kinds) out.push_back("model.layers." + std::to_string(l) + "." + k);
  return out;
}

Entry float32_entry(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  Entry e{DType::kF32, shape, std::vector<std::byte>(v.size() * 4)};
  std::memcpy(e.bytes.data(), v.data(), e.bytes.size());
  return e;
}

// A per-tensor or per-channel fp8 layer of `f` replaced by its dense W = w_q · s_w in float32 (the
// product Fp8Weight::to_dense forms), its scales removed.
void make_dense(Folder& f, const std::string& module) {
  const Entry& w = f.tensors.at(module + ".weight");
  const TensorView s = f.view(module + ".weight_scale");
  std::vector<float> scale(size_t(s.numel()));
  to_float32(s, scale.data());
  const int64_t N = w.shape[0], K = w.shape[1];
  std::vector<float> dense(size_t(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      dense[size_t(n * K + k)] = quant::e4m3_to_float(std::to_integer<uint8_t>(w.bytes[size_t(n * K + k)])) *
                                 scale[scale.size() == 1 ? 0 : size_t(n)];
  f.tensors[module + ".weight"] = float32_entry(w.shape, dense);
  f.tensors.erase(module + ".weight_scale");
  f.tensors.erase(module + ".input_scale");
}

std::vector<float> logits_of_folder(const Folder& f, const std::string& tag, int tp = 1) {
  test::ScratchDir dir(tag);
  f.write(dir.path());
  fs::copy_file(kFixtures / "llama" / "generation_config.json", dir.path() / "generation_config.json");
  return test::prompt_logits(*test::open_cpu(dir.str(), tp));
}

TEST(CtFp8Model, IsTheFloat64ReferenceOfTheSameArithmetic) {
  const fs::path dir = kFixtures / "llama_ct_fp8";
  auto b = test::open_cpu(dir.string());
  EXPECT_EQ(b->config().quantization.method, quant::Method::kCompressedTensors);
  const std::vector<float> got = test::prompt_logits(*b);
  ASSERT_EQ(got.size(), test::kFp8Prompt.size() * size_t(b->config().vocab_size));
  EXPECT_LT(test::worst_against_fp8_reference(got, dir.string(), b->config(), Folder(dir).config["quantization_config"]),
            1e-4);
}

// Quantization is not a no-op, yet the logits stay near the float32 model the fixture was made from.
TEST(CtFp8Model, StaysNearTheModelItWasMadeFrom) {
  const std::vector<float> got = test::prompt_logits(*test::open_cpu((kFixtures / "llama_ct_fp8").string()));
  const std::vector<float> base = test::prompt_logits(*test::open_cpu((kFixtures / "llama").string()));
  ASSERT_EQ(got.size(), base.size());
  double spread = 0;
  for (float v : base) spread = std::max(spread, double(std::abs(v)));
  const double worst = test::worst_difference(got, base);
  EXPECT_GT(worst, 1e-4);
  EXPECT_LT(worst, 0.25 * spread);  // the quantized fixtures' bar (quant_model_test.cpp)
}

// Each group alone (the other's layers dense, as their dequantized weights) against the "fp8"
// checkpoint of the same tensors, on one rank and on two: the static attention group and the
// dynamic MLP group. Column-parallel layers take rows of w_q and their scales (each fused part's
// own per-tensor scale on its rows); row-parallel ones take columns under their one scale, and
// quantize the rank's inputs: with static input scales two ranks compute what one does.
TEST(CtFp8Model, EachGroupIsTheFp8CheckpointOfTheSameTensors) {
  struct Case {
    const char* kept_group;
    std::vector<std::string> fp8_kinds, dense_kinds;
    const char* activation_scheme;
  };
  for (const Case& c : {Case{"group_0", modules_of(kAttention), modules_of(kMlp), "static"},
                        Case{"group_1", modules_of(kMlp), modules_of(kAttention), "dynamic"}}) {
    SCOPED_TRACE(c.kept_group);
    Folder ct(kFixtures / "llama_ct_fp8");
    json& q = ct.config["quantization_config"];
    for (const char* g : {"group_0", "group_1"})
      if (std::string(g) != c.kept_group) q["config_groups"].erase(g);
    const std::vector<std::string> dense = every_layer(c.dense_kinds);
    for (const std::string& m : dense) {
      make_dense(ct, m);
      q["ignore"].push_back(m);  // the "Linear" group would target them
    }
    Folder fp8 = ct;
    fp8.config["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", c.activation_scheme}};
    fp8.config["quantization_config"]["ignored_layers"] = q["ignore"];
    const std::vector<float> want = logits_of_folder(fp8, "fp8");
    EXPECT_EQ(logits_of_folder(ct, "ct"), want);
    const std::vector<float> two = logits_of_folder(ct, "ct2", 2);
    EXPECT_EQ(two, logits_of_folder(fp8, "fp8-2", 2));
    if (std::string(c.activation_scheme) == "static") {
      EXPECT_LT(test::worst_difference(two, want), 1e-4);
    }
    // And the FP8 layers are in FP8: the fixture's dense model is another answer.
    Folder all_dense = ct;
    for (const std::string& m : every_layer(c.fp8_kinds)) make_dense(all_dense, m);
    all_dense.config.erase("quantization_config");
    EXPECT_GT(test::worst_difference(logits_of_folder(all_dense, "dense"), want), 1e-5);
  }
}

// With dynamic per-token scales a row-parallel rank quantizes its half of the inputs on its own
// amax (as vLLM's ranks do), so two ranks differ from one by activation rounding, well inside
// W8A8's own distance from the unquantized model (0.21 of it here).
TEST(CtFp8Model, TensorParallelRanksStayWithinTheQuantizationError) {
  const std::string dir = (kFixtures / "llama_ct_fp8").string();
  const std::vector<float> one = test::prompt_logits(*test::open_cpu(dir));
  const std::vector<float> two = test::prompt_logits(*test::open_cpu(dir, 2));
  const std::vector<float> base = test::prompt_logits(*test::open_cpu((kFixtures / "llama").string()));
  ASSERT_EQ(two.size(), one.size());
  const double tp = test::worst_difference(one, two), quantization = test::worst_difference(one, base);
  EXPECT_GT(tp, 0.0);
  EXPECT_LT(tp, 0.35 * quantization) << "W8A8's distance from the float32 model " << quantization;
}

// An int4 pack-quantized attention group (llama_ct's) beside the FP8 MLP group (llama_ct_fp8's)
// under format mixed-precision: the fp8 checkpoint of the MLP beside the attention's dequantized
// weights (the CPU backend computes an integer layer on its dequantized weight).
TEST(CtFp8Model, MixesWithAnIntegerGroup) {
  const Folder ints(kFixtures / "llama_ct");
  Folder mixed(kFixtures / "llama_ct_fp8");
  json& q = mixed.config["quantization_config"];
  q["format"] = "mixed-precision";
  q["config_groups"]["group_0"] = ints.config["quantization_config"]["config_groups"]["group_0"];
  ASSERT_EQ(q["config_groups"]["group_0"]["format"], "pack-quantized");
  for (const std::string& m : every_layer(modules_of(kAttention))) {
    for (const char* role : {".weight", ".weight_scale", ".input_scale"}) mixed.tensors.erase(m + role);
    for (const auto& [name, e] : ints.tensors)
      if (name.rfind(m + ".", 0) == 0) mixed.tensors[name] = e;
  }
  const std::vector<float> got = logits_of_folder(mixed, "mixed");

  Folder fp8(kFixtures / "llama_ct_fp8");
  const WeightSet int_weights((kFixtures / "llama_ct").string());
  quant::CheckpointReader reader(int_weights, load_model_config((kFixtures / "llama_ct").string()).quantization);
  const Folder shapes(kFixtures / "llama");
  json ignored = {"lm_head"};
  for (const std::string& m : every_layer(modules_of(kAttention))) {
    const std::vector<int64_t> shape = shapes.tensors.at(m + ".weight").shape;
    const quant::ResolvedTensor w = reader.get(m + ".weight", shape);
    ASSERT_TRUE(w.dequantized());
    std::vector<float> v(size_t(w.view().numel()));
    std::memcpy(v.data(), w.view().data, v.size() * 4);
    fp8.tensors[m + ".weight"] = float32_entry(shape, v);
    fp8.tensors.erase(m + ".weight_scale");
    fp8.tensors.erase(m + ".input_scale");
    ignored.push_back(m);
  }
  fp8.config["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"ignored_layers", ignored}};
  EXPECT_EQ(got, logits_of_folder(fp8, "fp8"));
  EXPECT_EQ(logits_of_folder(mixed, "mixed2", 2), logits_of_folder(fp8, "fp8-2", 2));
}

TEST(CtFp8Model, RefusesWhatDisagreesWithTheConfigGroupsNamingTheTensor) {
  const std::string q0 = "model.layers.0.self_attn.q_proj.", up = "model.layers.1.mlp.up_proj.";
  auto expect = [](const std::string& e, std::initializer_list<const char*> needles) {
    ASSERT_FALSE(e.empty());
    for (const char* n : needles) EXPECT_NE(e.find(n), std::string::npos) << n << " not in: " << e;
  };
  auto group = [](Folder& f, const char* g) -> json& { return f.config["quantization_config"]["config_groups"][g]; };
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.tensors.erase(q0 + "weight_scale"); }),
         {"model.layers.0.self_attn.q_proj.weight_scale is missing", "model.safetensors"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.tensors.erase(q0 + "input_scale"); }),
         {"model.layers.0.self_attn.q_proj.input_scale is missing", "config_groups.group_0"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.tensors[up + "input_scale"] = f.tensors.at(q0 + "input_scale"); }),
         {"model.layers.1.mlp.up_proj.input_scale", "dynamic"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.tensors.at(q0 + "input_scale").bytes.assign(4, std::byte{0}); }),
         {"model.layers.0.self_attn.q_proj.input_scale", "is zero"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) {
           f.tensors[q0 + "weight_scale"] = {DType::kF32, {2, 1}, std::vector<std::byte>(8)};
         }),
         {"model.layers.0.self_attn.q_proj.weight_scale", "shape [2, 1]", "strategy 'tensor'"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.tensors[up + "weight_scale"] = f.tensors.at(q0 + "weight_scale"); }),
         {"model.layers.1.mlp.up_proj.weight_scale", "shape [1]", "strategy 'channel'"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) {
           f.tensors[q0 + "weight_scale"] = {DType::kF32, {1}, std::vector<std::byte>(4, std::byte{0xFF})};  // NaN
         }),
         {"model.layers.0.self_attn.q_proj.weight_scale", "finite"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.tensors.at(q0 + "weight").dtype = DType::kF8E5M2; }),
         {"model.layers.0.self_attn.q_proj.weight", "float8_e5m2"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.tensors[q0 + "weight_scale_inv"] = f.tensors.at(q0 + "weight_scale"); }),
         {"model.layers.0.self_attn.q_proj.weight_scale_inv", "weight_scale"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) {
           f.tensors[q0 + "weight_zero_point"] = {DType::kI8, {1}, {std::byte{3}}};
         }),
         {"model.layers.0.self_attn.q_proj.weight_zero_point", "is not zero", "group_0"});
  EXPECT_EQ(load_error("llama_ct_fp8", [&](Folder& f) {  // an older writer's zeros of a symmetric scheme
              f.tensors[q0 + "weight_zero_point"] = {DType::kF8E4M3, {1}, {std::byte{0}}};
              f.tensors[q0 + "input_zero_point"] = {DType::kI8, {1}, {std::byte{0}}};
            }),
            "");
  expect(load_error("llama_ct_fp8", [&](Folder& f) {  // a zero point of no layer read
           f.tensors["model.layers.0.mlp.extra_proj.weight_zero_point"] = {DType::kI8, {1}, {std::byte{0}}};
         }),
         {"model.layers.0.mlp.extra_proj.weight_zero_point", "belongs to no fp8 layer"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) {  // an MLP layer stored dense that the Linear group targets
           make_dense(f, "model.layers.1.mlp.up_proj");
         }),
         {"model.layers.1.mlp.up_proj.weight", "config_groups.group_1 (FP8) targets", "ignore does not list"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) {  // the LM head is a Linear too once ignore drops it
           f.config["quantization_config"]["ignore"] = json::array();
         }),
         {"lm_head.weight", "config_groups.group_1"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) {
           f.config["quantization_config"]["ignore"].push_back("model.layers.1.mlp.up_proj");
         }),
         {"model.layers.1.mlp.up_proj.weight", "ignore lists"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) {  // the attention's group made an integer one
           group(f, "group_0") = Folder(kFixtures / "llama_ct").config["quantization_config"]["config_groups"]["group_0"];
           f.config["quantization_config"]["format"] = "mixed-precision";
         }),
         {"model.layers.0.self_attn.q_proj.weight", "config_groups.group_0", "pack-quantized (integer)"});
  expect(load_error("llama_ct_fp8", [&](Folder& f) { group(f, "group_0")["targets"] = {"model.layers.9.self_attn.q_proj"}; }),
         {"model.layers.0.self_attn.q_proj.weight_scale", "strategy 'channel'", "group_1"});  // now the Linear group's
  expect(load_error("llama_ct_fp8", [&](Folder& f) { f.config["quantization_config"]["kv_cache_scheme"] = {{"num_bits", 8}}; }),
         {"kv_cache_scheme.type 'int' (the default) is not supported"});
  // The setting against the checkpoint: fp8 takes an all-FP8 checkpoint as it is, none refuses it.
  EXPECT_EQ(load_error("llama_ct_fp8", [](Folder&) {}, "fp8"), "");
  expect(load_error("llama_ct_fp8", [](Folder&) {}, "none"), {"quantization 'none'", "'compressed-tensors'"});
  expect(load_error("llama_ct", [](Folder&) {}, "fp8"), {"quantization 'fp8'", "'compressed-tensors'"});
}

}  // namespace
}  // namespace zinfer::gpu
