// The safetensors reader and writer: round trips, sharded folders, and every structural error
// naming the file and the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gpu/safetensors.h"
#include "gpu/safetensors_writer.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu {
namespace {

using test::ScratchDir;

// Writes an 8-byte length, the header text and `data_bytes` bytes of payload.
void write_raw(const std::string& path, const std::string& header, size_t data_bytes, uint64_t declared_len) {
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((declared_len >> (8 * i)) & 0xff));
  out << header;
  out << std::string(data_bytes, '\0');
}
void write_raw(const std::string& path, const std::string& header, size_t data_bytes) {
  write_raw(path, header, data_bytes, header.size());
}

// Expects SafetensorsError whose message contains every one of `parts`.
template <typename F>
void expect_error(F&& f, std::vector<std::string> parts) {
  try {
    f();
    FAIL() << "expected SafetensorsError";
  } catch (const SafetensorsError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

TEST(Safetensors, WriterRoundTripsF32AndBf16) {
  ScratchDir dir("st");
  SafetensorsWriter w;
  w.add_f32("a.weight", {2, 3}, {1, 2, 3, 4, 5, 6.5f});
  w.add_bf16("b", {3}, {1.0f, -2.5f, 3.14159f});
  w.add("ids", DType::kI32, {2}, std::vector<std::byte>(8, std::byte{1}));
  w.write(dir.str() + "/model.safetensors");

  WeightSet set(dir.str());
  EXPECT_EQ(set.names(), (std::vector<std::string>{"a.weight", "b", "ids"}));
  const TensorView& a = set.get("a.weight", {2, 3});
  EXPECT_EQ(a.dtype, DType::kF32);
  std::vector<float> af(6);
  to_float32(a, af.data());
  EXPECT_EQ(af, (std::vector<float>{1, 2, 3, 4, 5, 6.5f}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % 8, 0u) << "tensor data should be 8-byte aligned";
  std::vector<float> bf(3);
  to_float32(set.get("b"), bf.data());
  EXPECT_EQ(bf[0], 1.0f);
  EXPECT_EQ(bf[1], -2.5f);
  EXPECT_NEAR(bf[2], 3.14159f, 0.01f);
  EXPECT_EQ(set.get("ids").nbytes, 8u);
  expect_error([&] { to_float32(set.get("ids"), bf.data()); }, {"ids", "I32"});
}

TEST(Safetensors, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 lies halfway between bf16 1.0 and 1.0078125: ties go to the even mantissa (1.0).
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 lies halfway between 1.0078125 (odd) and 1.015625 (even).
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(bf16_to_float(0xc020), -2.5f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
}

TEST(Safetensors, Fp16ConversionsMatchHandValues) {
  EXPECT_EQ(fp16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_float(0xc000), -2.0f);
  EXPECT_EQ(fp16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(fp16_to_float(0x7c00)));
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(1e6f), 0x7c00);
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.0.
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  for (uint16_t bits : {0x3555, 0x0200, 0x8001, 0x4248, 0x1234})
    EXPECT_EQ(float_to_fp16(fp16_to_float(bits)), bits) << bits;
}

TEST(Safetensors, TruncatedFileIsAnError) {
  ScratchDir dir("st");
  const std::string p = dir.str() + "/t.safetensors";
  write_raw(p, "", 0, 0);
  { std::ofstream(p, std::ios::binary) << "abc"; }
  expect_error([&] { SafetensorsFile f(p); }, {p, "truncated"});
  // Header promises 16 bytes of data; only 8 are there.
  const std::string h = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  write_raw(p, h, 8);
  expect_error([&] { SafetensorsFile f(p); }, {p, "'w'", "outside"});
}

TEST(Safetensors, OverlongHeaderIsAnError) {
  ScratchDir dir("st");
  const std::string p = dir.str() + "/t.safetensors";
  write_raw(p, "{}", 0, 200ull << 20);
  expect_error([&] { SafetensorsFile f(p); }, {p, "100 MB"});
  write_raw(p, "{}", 0, 4096);
  expect_error([&] { SafetensorsFile f(p); }, {p, "past the end"});
}

TEST(Safetensors, OffsetsOutsideOverlappingOrNotCoveringAreErrors) {
  ScratchDir dir("st");
  const std::string p = dir.str() + "/t.safetensors";
  write_raw(p, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12);
  expect_error([&] { SafetensorsFile f(p); }, {p, "'b'", "overlaps"});
  write_raw(p, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", 20);
  expect_error([&] { SafetensorsFile f(p); }, {p, "'b'", "belong to no tensor"});
  write_raw(p, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 12);
  expect_error([&] { SafetensorsFile f(p); }, {p, "cover 8 of 12"});
  write_raw(p, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8);
  expect_error([&] { SafetensorsFile f(p); }, {p, "'a'"});
}

TEST(Safetensors, ByteCountMustMatchDtypeTimesShape) {
  ScratchDir dir("st");
  const std::string p = dir.str() + "/t.safetensors";
  write_raw(p, R"({"w":{"dtype":"BF16","shape":[3],"data_offsets":[0,8]}})", 8);
  expect_error([&] { SafetensorsFile f(p); }, {p, "'w'", "BF16", "[3]", "6 bytes"});
  write_raw(p, R"({"w":{"dtype":"Q4","shape":[3],"data_offsets":[0,8]}})", 8);
  expect_error([&] { SafetensorsFile f(p); }, {p, "'w'", "Q4"});
  write_raw(p, R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}})", 8);
  expect_error([&] { SafetensorsFile f(p); }, {p, "'w'", "negative"});
  write_raw(p, R"({"w": nonsense})", 8);
  expect_error([&] { SafetensorsFile f(p); }, {p, "JSON"});
}

TEST(Safetensors, AllDtypesParse) {
  ScratchDir dir("st");
  const std::string p = dir.str() + "/t.safetensors";
  write_raw(p,
            R"({"__metadata__":{"format":"pt"},"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]},)"
            R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"c":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[2,4]},)"
            R"("d":{"dtype":"BOOL","shape":[4],"data_offsets":[4,8]},"e":{"dtype":"I64","shape":[1],"data_offsets":[8,16]},)"
            R"("f":{"dtype":"F64","shape":[1],"data_offsets":[16,24]},"g":{"dtype":"F16","shape":[0,5],"data_offsets":[24,24]}})",
            24);
  SafetensorsFile f(p);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.tensors().at("c").dtype, DType::kF8E4M3);
  EXPECT_EQ(f.tensors().at("e").dtype, DType::kI64);
  EXPECT_EQ(f.tensors().at("g").numel(), 0);
}

TEST(Safetensors, WrongShapeOnGetNamesTensorAndShapes) {
  ScratchDir dir("st");
  SafetensorsWriter w;
  w.add_f32("model.norm.weight", {4}, {1, 2, 3, 4});
  w.write(dir.str() + "/model.safetensors");
  WeightSet set(dir.str());
  expect_error([&] { set.get("model.norm.weight", {5}); }, {"model.norm.weight", "[4]", "expected [5]"});
  expect_error([&] { set.get("missing.weight"); }, {"missing.weight", "not found"});
}

TEST(Safetensors, ShardedFolderThroughIndex) {
  ScratchDir dir("st");
  SafetensorsWriter a, b;
  a.add_f32("x", {1}, {1});
  b.add_f32("y", {2}, {2, 3});
  a.write(dir.str() + "/model-00001-of-00002.safetensors");
  b.write(dir.str() + "/model-00002-of-00002.safetensors");
  std::ofstream(dir.str() + "/model.safetensors.index.json")
      << R"({"metadata":{},"weight_map":{"x":"model-00001-of-00002.safetensors","y":"model-00002-of-00002.safetensors"}})";
  WeightSet set(dir.str());
  EXPECT_TRUE(set.has("x"));
  EXPECT_EQ(set.get("y", {2}).numel(), 2);
  std::ofstream(dir.str() + "/model.safetensors.index.json")
      << R"({"weight_map":{"z":"model-00001-of-00002.safetensors"}})";
  expect_error([&] { WeightSet s(dir.str()); }, {"'z'", "model-00001-of-00002.safetensors"});
}

TEST(Safetensors, FolderWithoutWeightsIsAnError) {
  ScratchDir dir("st");
  expect_error([&] { WeightSet s(dir.str()); }, {dir.str(), "model.safetensors"});
}

}  // namespace
}  // namespace zinfer::gpu
