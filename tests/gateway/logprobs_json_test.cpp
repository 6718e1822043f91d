// Logprobs in vLLM's shapes (gateway/logprobs_json.h), decided on fixed inputs.
#include <gtest/gtest.h>

#include "gateway/logprobs_json.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

const TokenTexts kTexts = {{1, "a"}, {2, " b"}, {3, "\xE2"}, {4, "\x82\xAC"}, {5, "\xC3\xA9"}, {6, "<|end|>"}};

TEST(TokenNaming, TextBytesAndIds) {
  TokenNaming n{&kTexts, false};
  EXPECT_EQ(n.name(2), " b");
  EXPECT_EQ(n.name(5), "\xC3\xA9");
  EXPECT_EQ(n.name(3), "bytes:\\xe2");  // part of a character
  EXPECT_EQ(n.name(4), "bytes:\\x82\\xac");
  EXPECT_EQ(n.name(99), "token_id:99");  // no text known
  EXPECT_EQ(n.bytes(3), json({0xE2}));
  EXPECT_EQ(n.bytes(5), json({0xC3, 0xA9}));
  EXPECT_EQ(n.characters(5), 1u);
  EXPECT_EQ(n.characters(3), 1u);  // a lead byte starts a character
  EXPECT_EQ(n.characters(4), 0u);  // continuation bytes do not
  TokenNaming ids{&kTexts, true};
  EXPECT_EQ(ids.name(2), "token_id:2");
  EXPECT_EQ(ids.bytes(2), json({'t', 'o', 'k', 'e', 'n', '_', 'i', 'd', ':', '2'}));
}

TEST(CompletionLogprobs, SampledTokenFirstThenLogprobsAlternatives) {
  TokenNaming n{&kTexts, false};
  const std::vector<protocol::TopLogprob> alts = {{2, -0.1f}, {1, -0.5f}, {6, -3.0f}};
  std::vector<LogprobEntry> e = {{1, -0.5f, &alts}, {2, -1e30f, &alts}};
  json j = completion_logprobs_json(e, 1, 10, n);
  EXPECT_EQ(j["tokens"], json({"a", " b"}));
  EXPECT_EQ(j["token_logprobs"][0], -0.5f);
  EXPECT_EQ(j["token_logprobs"][1], -9999.0f);  // clamped as vLLM
  // logprobs 1: the sampled token and one alternative (the best other).
  EXPECT_EQ(j["top_logprobs"][0], json({{"a", -0.5f}, {" b", -0.1f}}));
  EXPECT_EQ(j["top_logprobs"][1], json({{" b", -9999.0f}, {"a", -0.5f}}));
  EXPECT_EQ(j["text_offset"], json({10, 11}));
  // logprobs 0: the sampled token alone.
  EXPECT_EQ(completion_logprobs_json(e, 0, 0, n)["top_logprobs"][0], json({{"a", -0.5f}}));
  // A position without logprobs (the prompt's first token).
  std::vector<LogprobEntry> first = {{6, std::nullopt, nullptr}, {1, -0.5f, nullptr}};
  json f = completion_logprobs_json(first, 2, 0, n);
  EXPECT_TRUE(f["token_logprobs"][0].is_null());
  EXPECT_TRUE(f["top_logprobs"][0].is_null());
  EXPECT_EQ(f["text_offset"], json({0, 7}));
}

TEST(ChatLogprobs, FirstTopLogprobsEntriesWithBytes) {
  TokenNaming n{&kTexts, false};
  const std::vector<protocol::TopLogprob> alts = {{2, -0.1f}, {1, -0.5f}};
  std::vector<LogprobEntry> e = {{3, -2.0f, &alts}};
  json c = chat_logprobs_json(e, 2, n)["content"];
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["token"], "bytes:\\xe2");
  EXPECT_EQ(c[0]["bytes"], json({0xE2}));
  ASSERT_EQ(c[0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(c[0]["top_logprobs"][0]["token"], "bytes:\\xe2");  // vLLM lists the sampled token first
  EXPECT_EQ(c[0]["top_logprobs"][1]["token"], " b");
  EXPECT_EQ(c[0]["top_logprobs"][1]["bytes"], json({' ', 'b'}));
  EXPECT_TRUE(chat_logprobs_json(e, 0, n)["content"][0]["top_logprobs"].empty());
}

TEST(PromptLogprobs, VllmsMapPerPosition) {
  TokenNaming n{&kTexts, false};
  protocol::PromptLogprobs lp;
  lp.first_position = 1;
  lp.logprobs = {-1.5f, -0.25f};
  lp.ranks = {7, 1};
  lp.top_logprobs = {{{5, -0.5f}, {2, -0.75f}}, {{2, -0.25f}}};
  json j = prompt_logprobs_json({1, 2, 2}, lp, n);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_TRUE(j[0].is_null());
  EXPECT_EQ(j[1]["2"], json({{"logprob", -1.5f}, {"rank", 7}, {"decoded_token", " b"}}));
  EXPECT_EQ(j[1]["5"], json({{"logprob", -0.5f}, {"rank", 1}, {"decoded_token", "\xC3\xA9"}}));
  EXPECT_EQ(j[1].size(), 2u);  // the prompt token is also alternative 2: listed once, with its rank
  EXPECT_EQ(j[2].size(), 1u);
  EXPECT_EQ(prompt_entries({1, 2, 2}, &lp)[2].logprob, -0.25f);
  EXPECT_FALSE(prompt_entries({1, 2, 2}, &lp)[0].logprob.has_value());
}

TEST(TextCharacters, CodePointsAndLooseBytes) {
  EXPECT_EQ(text_characters("h\xC3\xA9llo"), 5u);
  EXPECT_EQ(text_characters("\xE2\x82\xAC"), 1u);
  EXPECT_EQ(text_characters("\xE2\x82"), 1u);
  EXPECT_EQ(text_characters(""), 0u);
}

}  // namespace
}  // namespace zinfer::gateway
