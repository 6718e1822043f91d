// The text of single tokens for logprobs (actors/detokenizer/token_texts.h): whole characters as
// decoded, special tokens kept, and a token that holds part of a UTF-8 character as its raw bytes
// (byte-level and byte-fallback vocabularies).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actors/detokenizer/token_texts.h"

namespace zinfer::actors {
namespace {

using nlohmann::json;

std::shared_ptr<const tok::Tokenizer> tokenizer(const json& vocab, const json& decoder) {
  json file = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}},
               {"added_tokens", json::array({{{"id", 9}, {"content", "<|end|>"}, {"special", true}, {"single_word", false},
                                              {"lstrip", false}, {"rstrip", false}, {"normalized", false}}})},
               {"normalizer", nullptr}, {"pre_tokenizer", nullptr}, {"post_processor", nullptr}, {"decoder", decoder}};
  return tok::Tokenizer::from_json(file.dump(), "test.json");
}

TEST(TokenText, ByteLevelTokens) {
  // "Ġhi" is " hi"; "â" stands for byte 0xE2 alone, the start of a 3-byte character.
  auto t = tokenizer({{"\xC4\xA0hi", 0}, {"h", 1}, {"\xC3\xA2", 2}, {"\xC3\xA2\xC4\xA4\xC2\xAC", 3}, {"<|end|>", 9}},
                     {{"type", "ByteLevel"}});
  EXPECT_EQ(token_text(*t, 0), " hi");
  EXPECT_EQ(token_text(*t, 2), "\xE2");                  // raw, not U+FFFD
  EXPECT_EQ(token_text(*t, 3), "\xE2\x82\xAC");          // a whole character: "€"
  EXPECT_EQ(token_text(*t, 9), "<|end|>");               // special tokens are kept
}

TEST(TokenText, ByteFallbackTokens) {
  auto t = tokenizer({{"a", 0}, {"<0xE2>", 1}, {"<0x41>", 2}, {"<|end|>", 9}}, {{"type", "ByteFallback"}});
  EXPECT_EQ(token_text(*t, 0), "a");
  EXPECT_EQ(token_text(*t, 1), "\xE2");
  EXPECT_EQ(token_text(*t, 2), "A");
}

TEST(TokenText, DeltaNamesEveryTokenItMentions) {
  auto t = tokenizer({{"\xC4\xA0hi", 0}, {"h", 1}, {"\xC3\xA2", 2}, {"<|end|>", 9}}, {{"type", "ByteLevel"}});
  protocol::TextDelta d;
  d.token_ids = {0};
  d.top_logprobs = {{{1, -1.0f}}};
  add_token_texts(*t, d);
  EXPECT_EQ(d.token_texts, (std::map<int32_t, std::string>{{0, " hi"}, {1, "h"}}));
  d.prompt_token_ids = {1, 2};
  d.prompt_logprobs = protocol::PromptLogprobs{};
  d.prompt_logprobs->top_logprobs = {{{9, -2.0f}}};
  add_token_texts(*t, d);
  EXPECT_EQ(d.token_texts.at(2), "\xE2");
  EXPECT_EQ(d.token_texts.at(9), "<|end|>");
}

}  // namespace
}  // namespace zinfer::actors
