// vLLM's extra endpoints over a real socket: /tokenize (prompt and messages forms, tools), /detokenize,
// /version, /ping (GET and POST); and vLLM's stop_reason in every choice.
#include <gtest/gtest.h>

#include "server_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

TEST_F(GatewayServerTest, TokenizePromptForm) {
  auto r = post_json(port_, "/tokenize", R"({"model":"test-model","prompt":"ab"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.json();
  // The fake tokenizer adds '^' as its special token (add_special_tokens defaults to true here).
  EXPECT_EQ(j["tokens"], json({'^', 'a', 'b'}));
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["max_model_len"], 100);
  EXPECT_TRUE(j["token_strs"].is_null());
  auto calls = engine_->tokenize_calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_FALSE(calls[0].detokenize);
  EXPECT_FALSE(calls[0].is_chat);
  EXPECT_EQ(calls[0].add_special_tokens, 1);

  j = post_json(port_, "/tokenize", R"({"prompt":"ab","add_special_tokens":false,"return_token_strs":true})").json();
  EXPECT_EQ(j["tokens"], json({'a', 'b'}));
  EXPECT_EQ(j["token_strs"], json({"a", "b"}));
}

TEST_F(GatewayServerTest, TokenizeMessagesForm) {
  auto r = post_json(port_, "/tokenize",
                     R"({"messages":[{"role":"user","content":"hi"}],"add_generation_prompt":false,
                         "chat_template_kwargs":{"enable_thinking":false}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["count"], std::string("user:hi\n").size());
  auto calls = engine_->tokenize_calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(calls[0].is_chat);
  ASSERT_EQ(calls[0].messages.size(), 1u);
  EXPECT_EQ(calls[0].messages[0].content, "hi");
  EXPECT_FALSE(calls[0].add_generation_prompt);
  EXPECT_FALSE(calls[0].enable_thinking);
  EXPECT_EQ(calls[0].add_special_tokens, 0);  // the chat form's default: the template writes them
}

// vLLM's chat form also takes tools (rendered by the template, in the client's key order) and
// continue_final_message; they travel to the tokenizer stage on the TokenizeRequest.
TEST_F(GatewayServerTest, TokenizeMessagesWithToolsAndAnOpenFinalMessage) {
  auto r = post_json(port_, "/tokenize",
                     R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Sure"}],
                         "add_generation_prompt":false,"continue_final_message":true,
                         "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto calls = engine_->tokenize_calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(calls[0].continue_final_message);
  EXPECT_EQ(calls[0].tools, R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}])");
  EXPECT_TRUE(calls[0].chat_template.empty());
}

TEST_F(GatewayServerTest, TokenizeRefusesWhatItDoesNotDo) {
  auto param_of = [&](const std::string& target, const std::string& body) {
    auto r = post_json(port_, target, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
    return r.status == 400 ? r.json()["error"]["param"].get<std::string>() : std::string();
  };
  EXPECT_EQ(param_of("/tokenize", R"({"prompt":"a","frobnicate":1})"), "frobnicate");
  EXPECT_EQ(param_of("/tokenize", R"({"messages":[{"role":"user","content":"a"}],"chat_template":"x"})"),
            "chat_template");
  // A tool without its function is refused as for generation (the param names the tool).
  EXPECT_EQ(param_of("/tokenize", R"({"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function"}]})")
                .rfind("tools[0]", 0),
            0u);
  EXPECT_EQ(param_of("/tokenize", R"({"messages":[{"role":"user","content":"a"}],"tools":{}})"), "tools");
  EXPECT_EQ(param_of("/tokenize", R"({"messages":[{"role":"user","content":"a"}],"continue_final_message":true})"),
            "continue_final_message");  // with add_generation_prompt's default (true), as vLLM
  EXPECT_EQ(param_of("/tokenize", R"({"prompt":7})"), "prompt");
  EXPECT_EQ(param_of("/tokenize", R"({})"), "prompt");
  EXPECT_EQ(param_of("/detokenize", R"({"tokens":[1,-2]})"), "tokens");
  EXPECT_EQ(param_of("/detokenize", R"({"tokens":[1],"prompt":"x"})"), "prompt");
  // No-op values of refused fields are fine, as for generation.
  EXPECT_EQ(post_json(port_, "/tokenize", R"({"messages":[{"role":"user","content":"a"}],"tools":[],
                                              "continue_final_message":false})").status, 200);
  EXPECT_EQ(post_json(port_, "/tokenize", R"({"model":"other","prompt":"a"})").status, 404);
  EXPECT_EQ(get(port_, "/tokenize").status, 405);
  EXPECT_TRUE(engine_->tokenize_calls().size() == 1u);  // only the accepted one reached the engine
}

TEST_F(GatewayServerTest, Detokenize) {
  auto r = post_json(port_, "/detokenize", R"({"model":"test-model","tokens":[104,105]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json(), json({{"prompt", "hi"}}));
  auto calls = engine_->tokenize_calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(calls[0].detokenize);
  // The engine's error (an id outside the vocabulary) is the client's 400.
  auto bad = post_json(port_, "/detokenize", R"({"tokens":[1000]})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.json()["error"]["message"].get<std::string>().find("1000"), std::string::npos);
}

TEST_F(GatewayServerTest, VersionAndPing) {
  auto v = get(port_, "/version");
  ASSERT_EQ(v.status, 200);
  EXPECT_FALSE(v.json()["version"].get<std::string>().empty());
  EXPECT_EQ(get(port_, "/ping").status, 200);
  EXPECT_EQ(post_json(port_, "/ping", "").status, 200);
  HttpConnection c(port_);
  EXPECT_EQ(c.request(http::verb::delete_, "/ping").status, 405);
}

TEST_F(GatewayServerTest, StopReasonInEveryChoice) {
  const int32_t stop = FakeEngine::token_id(0, 1);
  auto r = post_json(port_, "/v1/completions",
                     R"({"prompt":"x","max_tokens":5,"return_token_ids":true,"stop_token_ids":[)" +
                         std::to_string(stop) + "]}");
  ASSERT_EQ(r.status, 200) << r.body;
  json choice = r.json()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_EQ(choice["stop_reason"], stop);
  EXPECT_EQ(choice["text"], FakeEngine::token_text(0, 0));  // the stop token's text is left out
  EXPECT_EQ(choice["token_ids"], json({FakeEngine::token_id(0, 0), stop}));

  // A choice that ran to its length has stop_reason null; so do chat choices and stream chunks.
  json length = post_json(port_, "/v1/chat/completions",
                          R"({"messages":[{"role":"user","content":"q"}],"max_tokens":2})").json();
  ASSERT_TRUE(length["choices"][0].contains("stop_reason"));
  EXPECT_TRUE(length["choices"][0]["stop_reason"].is_null());

  auto s = post_json(port_, "/v1/completions",
                     R"({"prompt":"x","max_tokens":5,"stream":true,"include_stop_str_in_output":true,
                         "stop_token_ids":[)" + std::to_string(stop) + "]}");
  auto events = sse_payloads(s.body);
  ASSERT_GE(events.size(), 3u);
  json first = json::parse(events[0]);
  EXPECT_TRUE(first["choices"][0]["stop_reason"].is_null());
  json last = json::parse(events[events.size() - 2]);
  EXPECT_EQ(last["choices"][0]["stop_reason"], stop);
  EXPECT_EQ(last["choices"][0]["text"], FakeEngine::token_text(0, 1));  // kept, as asked
}

TEST_F(GatewayServerTest, ClientRequestIdNamesTheResponse) {
  json j = post_json(port_, "/v1/chat/completions",
                     R"({"messages":[{"role":"user","content":"q"}],"max_tokens":1,"request_id":"abc-1"})")
               .json();
  EXPECT_EQ(j["id"], "chatcmpl-abc-1");
}

}  // namespace
}  // namespace zinfer::gateway::testing
