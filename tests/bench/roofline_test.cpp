// The roofline against figures worked out by hand from the published configs
// (tests/data/configs/*/config.json). Conventions (tools/bench/lib/roofline.h):
//   params  = vocab*hidden (embedding) + vocab*hidden (lm_head, unless tied)
//           + layers * (q + k + v + o + gate + up + down weights) + layers * (q,k,v biases: Qwen2 only)
//           + layers * 2*hidden (norms) + hidden (final norm)
//   bf16    = 2 * params
//   int8    = 2 * (params - linear) + linear + layers * 2 * (sum of the linears' output channels)
//   int4    = 2 * (params - linear) + linear/2 + layers * sum over linears of out*ceil(in/128)*2.5
//   kv/tok  = 2 * layers * kv_heads * head_dim * 2
//   max_kv  = floor((80 GiB - weight bytes) / kv per token) on an H100 SXM (80 GiB = 85899345920 B)
//   users   = floor(max_kv / context)
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "tools/bench/lib/roofline.h"

namespace zinfer::bench {
namespace {

std::string config(const std::string& name) {
  return std::string(ZINFER_SOURCE_DIR) + "/tests/data/configs/" + name + "/config.json";
}

struct Expected {
  const char* name;
  int64_t params, bf16, int8, int4, kv_per_token;
  int64_t max_kv_bf16, users_1k_bf16, users_8k_bf16, users_32k_bf16;
  int64_t max_kv_int4;
};

// Worked out per model (h = hidden, i = intermediate, L = layers, H/KV heads, d = head_dim, V = vocab):
const Expected kExpected[] = {
    // Llama-3-8B: h 4096, i 14336, L 32, H 32, KV 8, d 128, V 128256, untied, no biases.
    //   embedding + lm_head = 2 * 128256*4096 = 1050673152
    //   per layer: q 4096*4096 + k 1024*4096 + v 1024*4096 + o 4096*4096 + 3 * 14336*4096 = 218103808;
    //   * 32 = 6979321856; norms 32*2*4096 + 4096 = 266240; params = 8030261248 (the published count).
    //   int8 scales: 32 * 2 * (4096+1024+1024+4096+14336+14336+4096) = 2752512
    //   int4 groups: 32 * 2.5 * (4096*32 + 1024*32*2 + 4096*32 + 14336*32*2 + 4096*112) = 136314880
    //   kv = 2*32*8*128*2 = 131072; max_kv = (85899345920 - 16060522496) / 131072 = 532827.6
    {"llama-3-8b", 8030261248, 16060522496, 2101878784 + 6979321856 + 2752512,
     2101878784 + 6979321856 / 2 + 136314880, 131072, 532827, 520, 65, 16, 611659},
    // Qwen1.5-0.5B: h 1024, i 2816, L 24, H = KV = 16, d 64, V 151936, tied.
    //   embedding 155582464; per layer 4*1024*1024 + 3*1024*2816 = 12845056, *24 = 308281344;
    //   q/k/v biases 24 * 3*1024 = 73728; norms 24*2048 + 1024 = 50176; params = 463987712.
    //   kv = 2*24*16*64*2 = 98304
    {"qwen1.5-0.5b", 463987712, 927975424, 620210176, 471574528, 98304, 864373, 844, 105, 26, 869016},
    // Qwen1.5-1.8B: h 2048, i 5504, L 24, H = KV = 16, d 128, V 151936, untied.
    //   2*311164928 + 24*(4*2048^2 + 3*2048*5504) + 24*3*2048 + 24*4096 + 2048 = 1836828672
    {"qwen1.5-1.8b", 1836828672, 3673657344, 2460426240, 1875996672, 196608, 418221, 408, 51, 12, 427364},
    // Qwen1.5-4B: h 2560, i 6912, L 40, H = KV = 20, d 128, V 151936, untied.
    //   2*388956160 + 40*(4*2560^2 + 3*2560*6912) + 40*3*2560 + 40*5120 + 2560 = 3950369280
    {"qwen1.5-4b", 3950369280, 7900738560, 4730926080, 3204776960, 409600, 190426, 185, 23, 5, 201891},
    // Qwen1.5-7B: h 4096, i 11008, L 32, H = KV = 32, d 128, V 151936, untied.
    //   2*622329856 + 32*(4*4096^2 + 3*4096*11008) + 32*3*4096 + 32*8192 + 4096 = 7721324544
    {"qwen1.5-7b", 7721324544, 15442649088, 8969363456, 5855125504, 524288, 134385, 131, 16, 4, 152672},
    // Qwen1.5-14B: h 5120, i 13696, L 40, H = KV = 40, d 128, V 152064, untied.
    //   2*778567680 + 40*(4*5120^2 + 3*5120*13696) + 40*3*5120 + 40*10240 + 5120 = 14167290880
    {"qwen1.5-14b", 14167290880, 28334581760, 15729694720, 9667164160, 819200, 70269, 68, 8, 2, 93056},
    // Qwen1.5-32B: h 5120, i 27392, L 64, H 40, KV 8, d 128, V 152064, untied.
    //   2*778567680 + 64*(2*5120^2 + 2*1024*5120 + 3*5120*27392) + 64*(5120 + 2*1024) + 64*10240 + 5120
    //   = 32512218112; kv = 2*64*8*128*2 = 262144
    {"qwen1.5-32b", 32512218112, 65024436224, 34079713280, 19198060544, 262144, 79631, 77, 9, 2, 254445},
};

TEST(Roofline, HandComputedFiguresOnH100) {
  const GpuSpec& h100 = find_gpu("h100-sxm");
  for (const auto& e : kExpected) {
    SCOPED_TRACE(e.name);
    const ModelShape m = load_model_shape(config(e.name));
    const Roofline r = compute_roofline(m, h100);
    EXPECT_EQ(r.params, e.params);
    EXPECT_EQ(r.weight_bytes[0], e.bf16);
    EXPECT_EQ(r.weight_bytes[1], e.int8);
    EXPECT_EQ(r.weight_bytes[2], e.int4);
    EXPECT_EQ(r.kv_bytes_per_token, e.kv_per_token);
    EXPECT_EQ(r.max_kv_tokens[0], e.max_kv_bf16);
    EXPECT_EQ(r.max_kv_tokens[2], e.max_kv_int4);
    EXPECT_EQ(r.users[0][0], e.users_1k_bf16);
    EXPECT_EQ(r.users[1][0], e.users_8k_bf16);
    EXPECT_EQ(r.users[2][0], e.users_32k_bf16);
    // decode at batch 1 = bytes / 3350 GB/s; prefill per token = 2 * params / 989.4 TFLOPS.
    EXPECT_NEAR(r.decode_ms_b1[0], e.bf16 / 3350e9 * 1e3, 1e-9);
    EXPECT_NEAR(r.prefill_ms_per_token[0], 2.0 * e.params / 989.4e12 * 1e3, 1e-12);
    EXPECT_NEAR(r.prefill_ms_per_token[1], 2.0 * e.params / 1978.9e12 * 1e3, 1e-12);
  }
}

TEST(Roofline, Llama3DecodeTimeOnH100) {
  // 16060522496 bytes / 3350e9 B/s = 4.794 ms per step at batch 1 in bf16.
  const Roofline r = compute_roofline(load_model_shape(config("llama-3-8b")), find_gpu("H100 SXM"));
  EXPECT_NEAR(r.decode_ms_b1[0], 4.7942, 1e-3);
}

TEST(Roofline, ModelFolderAndParsedShape) {
  const ModelShape m = load_model_shape(std::string(ZINFER_SOURCE_DIR) + "/tests/data/configs/qwen1.5-32b");
  EXPECT_EQ(m.architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.tie_word_embeddings);
  const ModelShape llama = load_model_shape(config("llama-3-8b"));
  EXPECT_FALSE(llama.qkv_bias);
  EXPECT_EQ(llama.vocab, 128256);
}

TEST(Roofline, JsonKeys) {
  const Roofline r = compute_roofline(load_model_shape(config("qwen1.5-0.5b")), find_gpu("h100-sxm"));
  const auto j = roofline_json(r);
  for (const char* f : {"bf16", "int8", "int4"}) {
    EXPECT_TRUE(j["weight_bytes"].contains(f));
    EXPECT_TRUE(j["decode_ms_b1"].contains(f));
    EXPECT_TRUE(j["max_kv_tokens"].contains(f));
    for (const char* ctx : {"1024", "8192", "32768"}) EXPECT_TRUE(j["users"][ctx].contains(f));
  }
  EXPECT_EQ(j["kv_bytes_per_token"], 98304);
  EXPECT_EQ(j["users"]["1024"]["bf16"], 844);
}

TEST(Roofline, WeightsLargerThanMemoryLeaveNoUsers) {
  // Qwen1.5-32B in bf16 (65 GB) does not fit a 24 GiB RTX 4090.
  const Roofline r = compute_roofline(load_model_shape(config("qwen1.5-32b")), find_gpu("rtx4090"));
  EXPECT_EQ(r.max_kv_tokens[0], 0);
  EXPECT_EQ(r.users[0][0], 0);
  // In int4 (19198060544 B) it leaves (25769803776 - 19198060544) / 262144 = 25069.2 tokens.
  EXPECT_EQ(r.max_kv_tokens[2], 25069);
  EXPECT_EQ(r.users[1][2], 3);  // 25069 / 8192
}

TEST(GpuTable, LookupAndErrors) {
  EXPECT_EQ(find_gpu("H200").mem_gib, 141);
  EXPECT_EQ(find_gpu("a100_40gb").mem_bw_gbs, 1555);
  EXPECT_EQ(find_gpu("RTX 3090").bf16_tflops, 71);
  EXPECT_EQ(gpu_table().size(), 8u);
  EXPECT_THROW(find_gpu("tpu-v5"), std::invalid_argument);
}

TEST(ModelShape, Errors) {
  EXPECT_THROW(load_model_shape("/nonexistent/config.json"), std::runtime_error);
  EXPECT_THROW(parse_model_shape(nlohmann::json{{"hidden_size", 8}}, "x.json"), std::runtime_error);
  nlohmann::json bad = {{"hidden_size", 64}, {"intermediate_size", 128}, {"num_hidden_layers", 2},
                        {"num_attention_heads", 6}, {"num_key_value_heads", 4}, {"vocab_size", 100}};
  EXPECT_THROW(parse_model_shape(bad, "x.json"), std::runtime_error);  // 6 heads over 4 kv heads
}

}  // namespace
}  // namespace zinfer::bench
