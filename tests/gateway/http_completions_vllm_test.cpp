// vLLM's completions features end to end over a real socket against the fake engine: batched
// prompts with n (choices i * n + j), echo (with the prompt's logprobs), max_tokens 0 with echo
// (the scoring call), prompt_logprobs, token naming (text, bytes:, token_id:), logprobs 0,
// return_token_ids and stream_options.continuous_usage_stats.
#include <map>

#include <gtest/gtest.h>

#include "server_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using nlohmann::json;

std::string generated(int sample, int tokens) {
  std::string s;
  for (int k = 0; k < tokens; ++k) s += FakeEngine::token_text(sample, k);
  return s;
}

TEST_F(GatewayServerTest, BatchedPromptsWithNAreIndexedPromptMajor) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":["ab","cde"],"n":2,"max_tokens":2})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = r.json();
  ASSERT_EQ(j["choices"].size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(j["choices"][k]["index"], k);
    EXPECT_EQ(j["choices"][k]["text"], generated(k % 2, 2)) << k;  // prompt k / 2, sample k % 2
  }
  // One engine request per prompt, each with the request's n; usage sums them.
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].prompt, "ab");
  EXPECT_EQ(sent[1].prompt, "cde");
  EXPECT_EQ(sent[0].sampling.n, 2);
  EXPECT_EQ(sent[1].sampling.n, 2);
  EXPECT_NE(sent[0].request_id, sent[1].request_id);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 2 + 3);
  EXPECT_EQ(j["usage"]["completion_tokens"], 8);
  // A batch of token-id prompts.
  auto ids = post_json(port_, "/v1/completions", R"({"prompt":[[7,8,9],[1]],"max_tokens":1})");
  ASSERT_EQ(ids.status, 200) << ids.body;
  EXPECT_EQ(ids.json()["choices"].size(), 2u);
  sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[2].prompt_ids, (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(sent[3].prompt_ids, (std::vector<int32_t>{1}));
}

TEST_F(GatewayServerTest, BatchedPromptsStream) {
  auto r = post_json(port_, "/v1/completions",
                     R"({"prompt":["a","b","c"],"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.back(), "[DONE]");
  std::map<int, std::string> text;
  json usage;
  for (size_t e = 0; e + 1 < events.size(); ++e) {
    json c = json::parse(events[e]);
    if (c["choices"].empty()) {
      usage = c["usage"];
      continue;
    }
    text[c["choices"][0]["index"].get<int>()] += c["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, (std::map<int, std::string>{{0, generated(0, 2)}, {1, generated(0, 2)}, {2, generated(0, 2)}}));
  EXPECT_EQ(usage["prompt_tokens"], 3);
  EXPECT_EQ(usage["completion_tokens"], 6);
}

TEST_F(GatewayServerTest, BatchErrorEndsTheWholeResponseAndAbortsTheRest) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":["fine HANG","TOO_LONG"],"max_tokens":2})");
  EXPECT_EQ(r.status, 400) << r.body;
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_TRUE(engine_->wait_aborted(sent[0].request_id, std::chrono::seconds(5)));
}

TEST_F(GatewayServerTest, EchoPrependsThePrompt) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"hey","max_tokens":2,"echo":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["choices"][0]["text"], "hey" + generated(0, 2));
  EXPECT_TRUE(engine_->submitted()[0].sampling.return_prompt);
  EXPECT_EQ(engine_->submitted()[0].sampling.prompt_logprobs, -1);  // no logprobs asked: none computed
}

TEST_F(GatewayServerTest, EchoWithLogprobsListsThePromptTokensFirst) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"hey","max_tokens":1,"echo":true,"logprobs":1})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(engine_->submitted()[0].sampling.prompt_logprobs, 1);  // vLLM: prompt_logprobs = logprobs
  const json lp = r.json()["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], json({"h", "e", "y", "s0t0 "}));
  EXPECT_EQ(lp["token_logprobs"], json({nullptr, -0.5, -1.0, -0.25}));
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());
  // The prompt token first, then one alternative (logprobs 1: two entries at most).
  EXPECT_EQ(lp["top_logprobs"][1], json({{"e", -0.5}, {"x500", -0.1f}}));
  EXPECT_EQ(lp["text_offset"], json({0, 1, 2, 3}));
}

TEST_F(GatewayServerTest, MaxTokensZeroWithEchoIsTheScoringCall) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"hey","max_tokens":0,"echo":true,"logprobs":0})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = r.json()["choices"][0];
  EXPECT_EQ(c["text"], "hey");
  EXPECT_EQ(c["logprobs"]["tokens"], json({"h", "e", "y"}));
  EXPECT_EQ(c["logprobs"]["token_logprobs"], json({nullptr, -0.5, -1.0}));
  EXPECT_EQ(c["logprobs"]["top_logprobs"][2], json({{"y", -1.0}}));  // logprobs 0: the token alone
  EXPECT_EQ(engine_->submitted()[0].sampling.max_tokens, 1);  // the engine generates one, not shown
}

TEST_F(GatewayServerTest, PromptLogprobsAsVllmReturnsThem) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"hi!","max_tokens":1,"prompt_logprobs":1})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json pl = r.json()["choices"][0]["prompt_logprobs"];
  ASSERT_EQ(pl.size(), 3u);
  EXPECT_TRUE(pl[0].is_null());
  EXPECT_EQ(pl[1][std::to_string('i')]["logprob"], -0.5);
  EXPECT_EQ(pl[1][std::to_string('i')]["rank"], 1);
  EXPECT_EQ(pl[1][std::to_string('i')]["decoded_token"], "i");
  EXPECT_EQ(pl[2]["500"]["rank"], 1);
  EXPECT_EQ(pl[2]["500"]["decoded_token"], "x500");
  // Chat: on the response, not on each choice.
  auto chat = post_json(port_, "/v1/chat/completions",
                        R"({"messages":[{"role":"user","content":"ok"}],"max_tokens":1,"prompt_logprobs":0})");
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json()["prompt_logprobs"].size(), 2u);
  EXPECT_EQ(chat.json()["prompt_logprobs"][1][std::to_string('k')]["logprob"], -0.5);
}

TEST_F(GatewayServerTest, TokenNamesAsTextBytesOrIds) {
  // Prompt byte 0xE2 is part of a UTF-8 character: "bytes:\xe2".
  auto r = post_json(port_, "/v1/completions",
                     R"({"prompt":[104,226],"max_tokens":1,"echo":true,"logprobs":0,"return_token_ids":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json c = r.json()["choices"][0];
  EXPECT_EQ(c["logprobs"]["tokens"], json({"h", "bytes:\\xe2", "s0t0 "}));
  EXPECT_EQ(c["prompt_token_ids"], json({104, 226}));
  EXPECT_EQ(c["token_ids"], json({1000}));
  auto ids = post_json(port_, "/v1/completions",
                       R"({"prompt":"hi","max_tokens":1,"logprobs":1,"return_tokens_as_token_ids":true})");
  ASSERT_EQ(ids.status, 200) << ids.body;
  EXPECT_EQ(ids.json()["choices"][0]["logprobs"]["tokens"], json({"token_id:1000"}));
  auto chat = post_json(port_, "/v1/chat/completions",
                        R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1,"logprobs":true,
                            "return_tokens_as_token_ids":true,"return_token_ids":true})");
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json()["choices"][0]["logprobs"]["content"][0]["token"], "token_id:1000");
  EXPECT_EQ(chat.json()["prompt_token_ids"], json({120}));  // 'x'
  EXPECT_EQ(chat.json()["choices"][0]["token_ids"], json({1000}));
}

TEST_F(GatewayServerTest, EchoStreamsThePromptFirstWithItsLogprobs) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"ab","max_tokens":2,"echo":true,"logprobs":0,"stream":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_GE(events.size(), 3u);
  const json first = json::parse(events[0])["choices"][0];
  EXPECT_EQ(first["text"], "ab" + FakeEngine::token_text(0, 0));
  EXPECT_EQ(first["logprobs"]["tokens"], json({"a", "b", "s0t0 "}));
  EXPECT_EQ(first["logprobs"]["text_offset"], json({0, 1, 2}));
  const json second = json::parse(events[1])["choices"][0];
  EXPECT_EQ(second["text"], FakeEngine::token_text(0, 1));
  EXPECT_EQ(second["logprobs"]["text_offset"], json({7}));  // "ab" + "s0t0 "
}

TEST_F(GatewayServerTest, ContinuousUsageInEveryChunk) {
  auto r = post_json(port_, "/v1/completions",
                     R"({"prompt":"abc","max_tokens":3,"stream":true,
                         "stream_options":{"include_usage":true,"continuous_usage_stats":true}})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 5u);  // 3 tokens, the usage chunk, [DONE]
  for (int e = 0; e < 3; ++e) {
    const json u = json::parse(events[e])["usage"];
    EXPECT_EQ(u["prompt_tokens"], 3);
    EXPECT_EQ(u["completion_tokens"], e + 1);
    EXPECT_EQ(u["total_tokens"], 3 + e + 1);
  }
}

TEST_F(GatewayServerTest, ChatEchoRepeatsTheLastAssistantMessage) {
  auto r = post_json(port_, "/v1/chat/completions",
                     R"({"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"A: "}],
                         "max_tokens":1,"echo":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["choices"][0]["message"]["content"], "A: " + FakeEngine::token_text(0, 0));
  // The last message is the user's: nothing to echo.
  auto plain = post_json(port_, "/v1/chat/completions",
                         R"({"messages":[{"role":"user","content":"q"}],"max_tokens":1,"echo":true})");
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.json()["choices"][0]["message"]["content"], FakeEngine::token_text(0, 0));
}

}  // namespace
}  // namespace zinfer::gateway::testing
