// The model layer (gpu/models/): architectures register themselves by config.json class name,
// an unknown one is refused naming the known ones, and Phi-3's config is read with what it
// cannot do (partial rotary, longrope) refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gpu/model_config.h"
#include "gpu/models/model_definition.h"

namespace zinfer::gpu {
namespace {

// Counts what a definition declares, so a test can look at a definition without a checkpoint.
class CountingStore final : public models::WeightStore {
 public:
  models::Linear linear(const std::vector<models::TensorPart>& parts) override {
    for (const auto& p : parts) names.push_back(p.name);
    return models::Linear{linears++};
  }
  models::Vector vector(const std::vector<models::TensorPart>& parts) override {
    for (const auto& p : parts) names.push_back(p.name);
    return models::Vector{vectors++};
  }
  int32_t linears = 0, vectors = 0;
  std::vector<std::string> names;
};

const char* kPhi3 = R"({
  "architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "vocab_size": 32064, "hidden_size": 3072,
  "intermediate_size": 8192, "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 32,
  "hidden_act": "silu", "max_position_embeddings": 4096, "original_max_position_embeddings": 4096,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "rope_scaling": null, "sliding_window": 2047,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 32000})";

// Invariant 17 (docs/architecture.md): every architecture the config reader accepts has one
// definition, run by both backends.
TEST(Architectures, EveryConfigArchitectureHasADefinition) {
  const std::vector<std::string> names = models::architecture_names();
  for (const char* a : {"LlamaForCausalLM", "MistralForCausalLM", "Phi3ForCausalLM", "Qwen2ForCausalLM",
                        "Qwen3ForCausalLM"}) {
    EXPECT_TRUE(std::find(names.begin(), names.end(), a) != names.end()) << a;
    EXPECT_TRUE(models::architecture_known(a)) << a;
  }
  EXPECT_FALSE(models::architecture_known("GPT2LMHeadModel"));
}

TEST(Architectures, UnknownArchitectureIsRefusedNamingTheKnownOnes) {
  ModelConfig c;
  c.architecture_name = "GPT2LMHeadModel";
  CountingStore store;
  try {
    models::build_model(c, store);
    FAIL() << "no error";
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("GPT2LMHeadModel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Phi3ForCausalLM"), std::string::npos) << e.what();
  }
}

TEST(Architectures, Phi3ReadsFusedTensorsAndItsSlidingWindow) {
  const ModelConfig c = parse_model_config(kPhi3, "", "phi3/config.json");
  EXPECT_EQ(c.architecture, Architecture::kPhi3);
  EXPECT_EQ(c.sliding_window, 2047);
  EXPECT_EQ(c.head_dim, 96);
  EXPECT_FALSE(c.attention_bias);
  CountingStore store;
  models::build_model(c, store);
  // embed, lm_head, per layer qkv / o / gate_up / down; norms: final + 2 per layer.
  EXPECT_EQ(store.linears, 2 + 4 * 2);
  EXPECT_EQ(store.vectors, 1 + 2 * 2);
  EXPECT_NE(std::find(store.names.begin(), store.names.end(), "model.layers.1.self_attn.qkv_proj.weight"),
            store.names.end());
  EXPECT_NE(std::find(store.names.begin(), store.names.end(), "model.layers.0.mlp.gate_up_proj.weight"),
            store.names.end());
}

TEST(Architectures, LlamaDeclaresItsBiasesOnlyWithAttentionBias) {
  ModelConfig c = parse_model_config(kPhi3, "", "x");  // shapes only
  c.architecture_name = "LlamaForCausalLM";
  c.attention_bias = c.o_proj_bias = true;
  CountingStore with;
  models::build_model(c, with);
  EXPECT_NE(std::find(with.names.begin(), with.names.end(), "model.layers.0.self_attn.o_proj.bias"), with.names.end());
  c.attention_bias = c.o_proj_bias = false;
  CountingStore without;
  models::build_model(c, without);
  EXPECT_EQ(without.vectors + 2 * 2, with.vectors);  // per layer: q/k/v bias and o bias
}

TEST(Architectures, Phi3FeaturesTheKernelsLackAreRefusedByName) {
  std::string partial = kPhi3;
  partial.insert(partial.size() - 1, R"(, "partial_rotary_factor": 0.75)");
  try {
    parse_model_config(partial, "", "phi4/config.json");
    FAIL() << "no error";
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("partial_rotary_factor"), std::string::npos) << e.what();
  }
  std::string longrope = kPhi3;
  const std::string null_scaling = R"("rope_scaling": null)";
  longrope.replace(longrope.find(null_scaling), null_scaling.size(),
                   R"("rope_scaling": {"type": "longrope", "short_factor": [1.0], "long_factor": [2.0]})");
  try {
    parse_model_config(longrope, "", "phi3-128k/config.json");
    FAIL() << "no error";
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("longrope"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zinfer::gpu
