// TokenizerChatConfig::load and apply_chat_template on the real Llama-3 and Qwen3 configs, with
// expectations worked out by reading their templates.
#include <gtest/gtest.h>

#include "actors/chat_template/chat_template.h"
#include "tests/chat_template/test_data.h"

namespace zinfer::chat {
namespace {

using nlohmann::json;

json conversation(std::initializer_list<std::pair<const char*, const char*>> turns) {
  json messages = json::array();
  for (const auto& [role, content] : turns) messages.push_back({{"role", role}, {"content", content}});
  return messages;
}

TEST(TokenizerChatConfig, LoadsFromAFolderTheConfigOrTheTokenizerJson) {
  ZINFER_REQUIRE_TOKENIZER("llama3");
  const auto dir = testing::tokenizer_dir("llama3");
  const auto from_dir = TokenizerChatConfig::load(dir.string());
  const auto from_config = TokenizerChatConfig::load((dir / "tokenizer_config.json").string());
  const auto from_tokenizer = TokenizerChatConfig::load((dir / "tokenizer.json").string());
  EXPECT_EQ(from_dir.bos_token, "<|begin_of_text|>");
  EXPECT_EQ(from_dir.eos_token, "<|end_of_text|>");
  EXPECT_NE(from_dir.chat_template.find("start_header_id"), std::string::npos);
  EXPECT_EQ(from_config.chat_template, from_dir.chat_template);
  EXPECT_EQ(from_tokenizer.chat_template, from_dir.chat_template);
}

TEST(TokenizerChatConfig, AddedTokenObjectsAndNullTokens) {
  const auto zephyr = TokenizerChatConfig::load(testing::source_path("tests/data/chat_template/templates/zephyr_style").string());
  EXPECT_EQ(zephyr.bos_token, "<s>");  // written as {"content": "<s>", ...}
  EXPECT_EQ(zephyr.eos_token, "</s>");
  const auto kitchen = TokenizerChatConfig::load(testing::source_path("tests/data/chat_template/templates/chatml_kitchen").string());
  EXPECT_EQ(kitchen.bos_token, "");  // null in the file
}

TEST(TokenizerChatConfig, ConfigWithoutTemplateIsAnError) {
  ZINFER_REQUIRE_TOKENIZER("llama2");
  try {
    TokenizerChatConfig::load(testing::tokenizer_dir("llama2").string());
    FAIL() << "Llama-2's config has no chat_template";
  } catch (const TemplateError& e) {
    EXPECT_NE(std::string(e.what()).find("no chat_template"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TokenizerChatConfig::load("/nonexistent/folder/tokenizer.json"), TemplateError);
}

TEST(ApplyChatTemplate, Llama3TrimsContentAndAlwaysOpensTheAssistantTurn) {
  ZINFER_REQUIRE_TOKENIZER("llama3");
  const auto config = TokenizerChatConfig::load(testing::tokenizer_dir("llama3").string());
  const json messages = conversation({{"system", " Be brief. "}, {"user", "Hi\n"}});
  const std::string expected =
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
  EXPECT_EQ(apply_chat_template(config, messages, true), expected);
  EXPECT_EQ(apply_chat_template(config, messages, false), expected);  // this template ignores the flag
}

TEST(ApplyChatTemplate, Qwen3EnableThinking) {
  ZINFER_REQUIRE_TOKENIZER("qwen3");
  const auto config = TokenizerChatConfig::load(testing::tokenizer_dir("qwen3").string());
  const json messages = conversation({{"user", "Hi"}});
  EXPECT_EQ(apply_chat_template(config, messages, true, {{"enable_thinking", false}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(apply_chat_template(config, messages, true, {{"enable_thinking", true}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(apply_chat_template(config, messages, true), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(apply_chat_template(config, messages, false), "<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ApplyChatTemplate, Qwen3DropsReasoningFromEarlierTurnsAndKeepsItAfterTheLastQuery) {
  ZINFER_REQUIRE_TOKENIZER("qwen3");
  const auto config = TokenizerChatConfig::load(testing::tokenizer_dir("qwen3").string());
  const json history = conversation({{"system", "S"}, {"user", "Q1"}, {"assistant", "<think>\nR1\n</think>\n\nA1"}, {"user", "Q2"}});
  EXPECT_EQ(apply_chat_template(config, history, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>user\nQ2<|im_end|>\n");
  const json last = conversation({{"user", "Q"}, {"assistant", "<think>\nR\n</think>\n\nA"}});
  EXPECT_EQ(apply_chat_template(config, last, false),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nR\n</think>\n\nA<|im_end|>\n");
}

TEST(ApplyChatTemplate, MistralStyleRejectsRolesThatDoNotAlternate) {
  const auto config = TokenizerChatConfig::load(testing::source_path("tests/data/chat_template/templates/mistral_style").string());
  EXPECT_EQ(apply_chat_template(config, conversation({{"system", "S"}, {"user", "U"}, {"assistant", " A "}}), false),
            "<s>[INST] S\n\nU [/INST] A</s>");
  try {
    apply_chat_template(config, conversation({{"user", "a"}, {"user", "b"}}), true);
    FAIL() << "two user turns in a row were accepted";
  } catch (const TemplateError& e) {
    EXPECT_NE(std::string(e.what()).find("Conversation roles must alternate"), std::string::npos) << e.what();
    EXPECT_GT(e.line(), 0);
  }
}

}  // namespace
}  // namespace zinfer::chat
