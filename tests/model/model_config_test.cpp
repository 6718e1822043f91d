// config.json parsing: the four architectures, both config styles, llama3/linear rope scaling,
// eos/bos from generation_config.json, and errors naming the unsupported value.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gpu/model_config.h"
#include "gpu/random_model.h"
#include "gpu/rope.h"
#include "tests/model/test_util.h"

namespace zinfer::gpu {
namespace {

const char* kLlama31Hub = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 128256,
  "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 8, "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
  "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "bos_token_id": 128000, "eos_token_id": 128001})";

const char* kQwen3Transformers5 = R"({
  "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024,
  "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
  "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 40960, "rms_norm_eps": 1e-06,
  "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}, "tie_word_embeddings": true,
  "attention_bias": false, "dtype": "bfloat16", "use_sliding_window": false, "sliding_window": null,
  "eos_token_id": 151645})";

std::string error_of(const std::string& config, const std::string& gen = "") {
  try {
    parse_model_config(config, gen, "test/config.json");
  } catch (const ModelConfigError& e) {
    return e.what();
  }
  return "";
}

// Invariant 23 (docs/architecture.md): both checkpoint config styles are read; unsupported values are named.
TEST(ModelConfig, Llama31HubStyle) {
  ModelConfig c = parse_model_config(kLlama31Hub, R"({"eos_token_id": [128001, 128008, 128009], "bos_token_id": 128000})",
                                     "llama31");
  EXPECT_EQ(c.architecture, Architecture::kLlama);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.rope_scaling.type, "llama3");
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{128001, 128008, 128009}));
  EXPECT_EQ(c.bos_token_id, 128000);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_FALSE(c.qk_norm);
}

// Invariant 23 (docs/architecture.md): both checkpoint config styles are read; unsupported values are named.
TEST(ModelConfig, Qwen3TransformersFiveStyle) {
  ModelConfig c = parse_model_config(kQwen3Transformers5, "", "qwen3");
  EXPECT_EQ(c.architecture, Architecture::kQwen3);
  EXPECT_EQ(c.head_dim, 128);  // explicit, not 1024 / 16
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.rope_theta, 1000000.0);
  EXPECT_EQ(c.rope_scaling.type, "default");
  EXPECT_EQ(c.torch_dtype, "bfloat16");
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645}));
  EXPECT_EQ(c.sliding_window, 0);
}

TEST(ModelConfig, Transformers5Llama3RopeParameters) {
  std::string cfg = kLlama31Hub;
  cfg.replace(cfg.find("\"rope_theta\""), std::string("\"rope_theta\": 500000.0, \"rope_scaling\"").size(), "\"rope_parameters\"");
  cfg.replace(cfg.find("\"rope_type\": \"llama3\""), std::string("\"rope_type\": \"llama3\"").size(),
              "\"rope_type\": \"llama3\", \"rope_theta\": 250000.0");
  ModelConfig c = parse_model_config(cfg, "", "t5");
  EXPECT_EQ(c.rope_theta, 250000.0);
  EXPECT_EQ(c.rope_scaling.type, "llama3");
  EXPECT_EQ(c.rope_scaling.high_freq_factor, 4.0);
}

TEST(ModelConfig, Qwen2HasBiasMistralHasWindow) {
  ModelConfig q = parse_model_config(R"({"architectures":["Qwen2ForCausalLM"],"vocab_size":10,"hidden_size":8,
    "intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,
    "tie_word_embeddings":true,"use_sliding_window":false,"sliding_window":32768})", "", "q2");
  EXPECT_TRUE(q.attention_bias);
  EXPECT_FALSE(q.o_proj_bias);
  EXPECT_TRUE(q.tie_word_embeddings);
  EXPECT_EQ(q.head_dim, 4);
  EXPECT_EQ(q.sliding_window, 0);
  ModelConfig m = parse_model_config(R"({"architectures":["MistralForCausalLM"],"vocab_size":10,"hidden_size":8,
    "intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2,"sliding_window":4096,
    "rope_scaling":{"type":"linear","factor":2.0}})", R"({"eos_token_id": 2})", "m");
  EXPECT_EQ(m.architecture, Architecture::kMistral);
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.num_key_value_heads, 2);  // defaults to num_attention_heads
  EXPECT_EQ(m.rope_scaling.type, "linear");
  EXPECT_EQ(m.eos_token_ids, (std::vector<int32_t>{2}));
}

TEST(ModelConfig, Qwen2SlidingWindowFollowsMaxWindowLayers) {
  const std::string head = R"({"architectures":["Qwen2ForCausalLM"],"vocab_size":10,"hidden_size":8,
    "intermediate_size":16,"num_hidden_layers":4,"num_attention_heads":2,"use_sliding_window":true,
    "sliding_window":64,"max_window_layers":)";
  EXPECT_EQ(parse_model_config(head + "4}", "", "all full").sliding_window, 0);
  EXPECT_EQ(parse_model_config(head + "0}", "", "all sliding").sliding_window, 64);
  EXPECT_NE(error_of(head + "2}").find("max_window_layers"), std::string::npos);
}

TEST(ModelConfig, LlamaAttentionBiasCoversOProj) {
  std::string cfg = kLlama31Hub;
  cfg.replace(cfg.find("\"tie_word_embeddings\""), 0, "\"attention_bias\": true, ");
  ModelConfig c = parse_model_config(cfg, "", "bias");
  EXPECT_TRUE(c.attention_bias);
  EXPECT_TRUE(c.o_proj_bias);
}

// Invariant 23 (docs/architecture.md): both checkpoint config styles are read; unsupported values are named.
TEST(ModelConfig, UnsupportedValuesAreNamed) {
  std::string base = kLlama31Hub;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_NE(error_of(with("LlamaForCausalLM", "GPT2LMHeadModel")).find("'GPT2LMHeadModel'"), std::string::npos);
  EXPECT_NE(error_of(with("\"silu\"", "\"gelu\"")).find("'gelu'"), std::string::npos);
  EXPECT_NE(error_of(with("\"llama3\"", "\"yarn\"")).find("'yarn'"), std::string::npos);
  EXPECT_NE(error_of(with("\"bfloat16\"", "\"int4\"")).find("'int4'"), std::string::npos);
  EXPECT_NE(error_of(with("\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5")).find("num_key_value_heads"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"vocab_size\": 128256,", "")).find("'vocab_size'"), std::string::npos);
  EXPECT_NE(error_of("[1,2]").find("test/config.json"), std::string::npos);
  EXPECT_NE(error_of(kLlama31Hub, R"({"eos_token_id": "x"})").find("eos_token_id"), std::string::npos);
}

TEST(ModelConfig, RandomModelConfigRoundTrips) {
  ModelConfig c = test::tiny_config(Architecture::kQwen3);
  c.rope_scaling.type = "llama3";
  c.rope_scaling.factor = 8;
  c.rope_scaling.original_max_position_embeddings = 64;
  ModelConfig back = parse_model_config(config_json_text(c, "bfloat16"), "", "roundtrip");
  EXPECT_EQ(back.architecture, c.architecture);
  EXPECT_EQ(back.head_dim, c.head_dim);
  EXPECT_EQ(back.rope_scaling.type, "llama3");
  EXPECT_EQ(back.rope_scaling.original_max_position_embeddings, 64);
  EXPECT_EQ(back.torch_dtype, "bfloat16");
  EXPECT_EQ(back.eos_token_ids, c.eos_token_ids);
}

// Llama-3.1 scaling checked by hand at head_dim 8, theta 10000, original context 64:
// inv_freq = 1, 0.1, 0.01, 0.001 -> wavelengths 6.28, 62.8, 628, 6283. With low/high factors 1/4
// the bands are: wavelength < 16 kept, > 64 divided by 8, in between interpolated.
TEST(Rope, Llama3ScalingBands) {
  ModelConfig c = test::tiny_config(Architecture::kLlama);
  c.head_dim = 8;
  c.rope_scaling.type = "llama3";
  c.rope_scaling.factor = 8;
  c.rope_scaling.low_freq_factor = 1;
  c.rope_scaling.high_freq_factor = 4;
  c.rope_scaling.original_max_position_embeddings = 64;
  std::vector<float> f = rope_inv_freq(c);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_FLOAT_EQ(f[0], 1.0f);
  const double wavelen = 2 * M_PI / 0.1;                 // 62.83: medium band
  const double smooth = (64.0 / wavelen - 1.0) / 3.0;    // 0.00621
  EXPECT_NEAR(f[1], (1 - smooth) * 0.1 / 8 + smooth * 0.1, 1e-7);
  EXPECT_NEAR(f[2], 0.01 / 8, 1e-9);
  EXPECT_NEAR(f[3], 0.001 / 8, 1e-10);
  c.rope_scaling.type = "linear";
  c.rope_scaling.factor = 2;
  f = rope_inv_freq(c);
  EXPECT_FLOAT_EQ(f[0], 0.5f);
  EXPECT_NEAR(f[3], 0.0005, 1e-10);
}

}  // namespace
}  // namespace zinfer::gpu
