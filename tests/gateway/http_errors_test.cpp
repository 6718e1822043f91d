// Every error the gateway answers, with its status and OpenAI's error JSON, while good requests
// run next to them.
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "server_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

// Checks the error shape and returns the error object.
json expect_error(const HttpReply& r, int status, const std::string& type, const std::string& param = {}) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  json j = json::parse(r.body, nullptr, false);
  EXPECT_TRUE(j.is_object() && j.contains("error")) << r.body;
  if (!j.is_object() || !j.contains("error")) return {};
  json e = j["error"];
  EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty());
  EXPECT_EQ(e["type"], type);
  EXPECT_EQ(e["code"], status);
  if (param.empty()) {
    EXPECT_TRUE(e.contains("param"));
  } else {
    EXPECT_EQ(e["param"], param) << r.body;
  }
  return e;
}

void expect_400(uint16_t port, const std::string& path, const std::string& body, const std::string& param) {
  SCOPED_TRACE(body);
  expect_error(post_json(port, path, body), 400, "invalid_request_error", param);
}

// Invariant 25 (docs/architecture.md): no input aborts a process.
TEST_F(GatewayServerTest, MalformedJson) {
  auto e = expect_error(post_json(port_, "/v1/completions", R"({"prompt": "x", )"), 400, "invalid_request_error");
  EXPECT_NE(e["message"].get<std::string>().find("JSON"), std::string::npos);
  EXPECT_TRUE(e["param"].is_null());
  expect_error(post_json(port_, "/v1/chat/completions", "[1,2]"), 400, "invalid_request_error");
  expect_error(post_json(port_, "/v1/completions", ""), 400, "invalid_request_error");
}

TEST_F(GatewayServerTest, WrongTypes) {
  const std::string c = "/v1/completions", chat = "/v1/chat/completions";
  expect_400(port_, c, R"({"prompt":"x","max_tokens":"5"})", "max_tokens");
  expect_400(port_, c, R"({"prompt":"x","max_tokens":2.5})", "max_tokens");
  expect_400(port_, c, R"({"prompt":"x","temperature":"hot"})", "temperature");
  expect_400(port_, c, R"({"prompt":"x","stream":"yes"})", "stream");
  expect_400(port_, c, R"({"prompt":{"text":"x"}})", "prompt");
  expect_400(port_, c, R"({"prompt":[1,"a"]})", "prompt");
  expect_400(port_, c, R"({"prompt":"x","stop":5})", "stop");
  expect_400(port_, c, R"({"prompt":"x","seed":"1"})", "seed");
  expect_400(port_, c, R"({"prompt":"x","logprobs":true})", "logprobs");
  expect_400(port_, c, R"({"prompt":"x","model":7})", "model");
  expect_400(port_, c, R"({"max_tokens":3})", "prompt");
  expect_400(port_, chat, R"({"messages":"hi"})", "messages");
  expect_400(port_, chat, R"({"messages":[{"role":"user","content":5}]})", "messages[0].content");
  expect_400(port_, chat, R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]})",
             "messages[0].content");
  expect_400(port_, chat, R"({"messages":[{"role":"user","content":"x"}],"logprobs":1})", "logprobs");
}

TEST_F(GatewayServerTest, BadValues) {
  const std::string c = "/v1/completions", chat = "/v1/chat/completions";
  expect_400(port_, c, R"({"prompt":"x","max_tokens":0})", "max_tokens");
  expect_400(port_, c, R"({"prompt":"x","max_tokens":-3})", "max_tokens");
  expect_400(port_, chat, R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":0})",
             "max_completion_tokens");
  expect_400(port_, c, R"({"prompt":"x","temperature":-0.5})", "temperature");
  expect_400(port_, c, R"({"prompt":"x","top_p":0})", "top_p");
  expect_400(port_, c, R"({"prompt":"x","top_p":1.5})", "top_p");
  expect_400(port_, c, R"({"prompt":"x","top_k":-2})", "top_k");
  expect_400(port_, c, R"({"prompt":"x","n":0})", "n");
  expect_400(port_, c, R"({"prompt":"x","logprobs":21})", "logprobs");
  expect_400(port_, c, R"({"prompt":"x","suffix":"y"})", "suffix");
  expect_400(port_, c, R"({"prompt":""})", "prompt");
  expect_400(port_, c, R"({"prompt":["a",""]})", "prompt");
  expect_400(port_, c, R"({"prompt":["a",[1,2]]})", "prompt");  // a batch mixes no forms: each is checked
  expect_400(port_, c, R"({"prompt":[["a"]]})", "prompt");
  expect_400(port_, c, R"({"prompt":"x","prompt_logprobs":-1})", "prompt_logprobs");
  expect_400(port_, c, R"({"prompt":"x","prompt_logprobs":21})", "prompt_logprobs");
  expect_400(port_, c, R"({"prompt":"x","prompt_logprobs":1,"stream":true})", "prompt_logprobs");
  expect_400(port_, c, R"({"prompt":"x","max_tokens":0,"echo":false})", "max_tokens");
  expect_400(port_, c, R"({"prompt":"x","stream":true,"stream_options":{"continuous_usage_stats":true}})",
             "stream_options.continuous_usage_stats");
  expect_400(port_, c, R"({"prompt":[-1]})", "prompt");
  expect_400(port_, c, R"({"prompt":"x","stop":[""]})", "stop");
  expect_400(port_, c, R"({"prompt":"x","max_tokens":5000})", "max_tokens");
  expect_400(port_, c, R"({"prompt":"x","stream_options":{"include_usage":true}})", "stream_options");
  expect_400(port_, c, R"({"prompt":"x","presence_penalty":2.5})", "presence_penalty");
  expect_400(port_, c, R"({"prompt":"x","frequency_penalty":-3})", "frequency_penalty");
  expect_400(port_, c, R"({"prompt":"x","repetition_penalty":0})", "repetition_penalty");
  expect_400(port_, c, R"({"prompt":"x","min_p":1.5})", "min_p");
  expect_400(port_, c, R"({"prompt":"x","logit_bias":{"abc":1}})", "logit_bias");
  expect_400(port_, c, R"({"prompt":"x","logit_bias":[1]})", "logit_bias");
  expect_400(port_, chat, R"({"messages":[{"role":"user","content":"x"}],"allowed_token_ids":[]})",
             "allowed_token_ids");
  expect_400(port_, chat, R"({"messages":[{"role":"user","content":"x"}],"bad_words":"x"})", "bad_words");
  expect_400(port_, c, R"({"prompt":"x","truncate_prompt_tokens":0})", "truncate_prompt_tokens");
  expect_400(port_, chat, R"({"messages":[]})", "messages");
  expect_400(port_, chat, R"({"messages":[{"role":"","content":"x"}]})", "messages[0].role");
  expect_400(port_, chat, R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})", "top_logprobs");
  // A token-id prompt that with max_tokens does not fit the context (4096).
  std::string ids = "[";
  for (int i = 0; i < 4095; ++i) ids += (i ? ",1" : "1");
  ids += "]";
  expect_400(port_, c, R"({"prompt":)" + ids + R"(,"max_tokens":2})", "prompt");
  EXPECT_TRUE(engine_->submitted().empty());  // none of these reached the engine
}

TEST_F(GatewayServerTest, UnknownModelAndPathAndMethod) {
  expect_error(post_json(port_, "/v1/completions", R"({"model":"gpt-9","prompt":"x"})"), 404, "not_found_error",
               "model");
  expect_error(get(port_, "/v1/nothing"), 404, "not_found_error");
  HttpConnection c(port_);
  auto r = c.request(http::verb::get, "/v1/completions");
  expect_error(r, 405, "invalid_request_error");
  auto r2 = c.request(http::verb::post, "/health", "{}");
  expect_error(r2, 405, "invalid_request_error");
  // The connection is still usable after errors.
  EXPECT_EQ(c.request(http::verb::get, "/health").status, 200);
}

// Invariant 27 (docs/architecture.md): back-pressure, not loss.
TEST_F(GatewayServerTest, BodyTooLarge) {
  std::string big = R"({"prompt":")" + std::string(100 * 1024, 'a') + R"("})";
  HttpConnection c(port_);
  auto r = c.request(http::verb::post, "/v1/completions", big);
  expect_error(r, 413, "invalid_request_error");
  EXPECT_FALSE(r.keep_alive);
}

TEST_F(GatewayServerTest, EngineErrorBeforeAnyTokenGetsItsStatus) {
  auto e = expect_error(post_json(port_, "/v1/completions", R"({"prompt":"TOO_LONG"})"), 400, "invalid_request_error");
  EXPECT_NE(e["message"].get<std::string>().find("longer than"), std::string::npos);
  // A stream that fails before its first token is still a plain 400, not a 200 stream.
  expect_error(post_json(port_, "/v1/completions", R"({"prompt":"TOO_LONG","stream":true})"), 400,
               "invalid_request_error");
}

// Invariant 26 (docs/architecture.md): a failed step fails only its plan's requests.
TEST_F(GatewayServerTest, EngineErrorMidStreamEndsTheStream) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"BREAK","max_tokens":10,"stream":true})");
  ASSERT_EQ(r.status, 200);
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 4u) << r.body;  // 2 tokens, error, [DONE]
  json err = json::parse(events[2]);
  EXPECT_EQ(err["error"]["code"], 500);
  EXPECT_EQ(events[3], "[DONE]");
  auto r2 = post_json(port_, "/v1/completions", R"({"prompt":"BREAK","max_tokens":10})");
  expect_error(r2, 500, "server_error");
}

// Invariant 27 (docs/architecture.md): back-pressure, not loss.
TEST_F(GatewayServerTest, OverloadGets429AndRecovers) {
  auto options = test_options();
  options.max_in_flight = 2;
  start(options);
  HttpConnection a(port_), b(port_);
  a.send(http::verb::post, "/v1/completions", R"({"prompt":"HANG","stream":true})");
  b.send(http::verb::post, "/v1/completions", R"({"prompt":"HANG","stream":true})");
  a.read_until("data: ");
  b.read_until("data: ");
  expect_error(post_json(port_, "/v1/completions", R"({"prompt":"x","max_tokens":1})"), 429, "rate_limit_error");
  a.close();
  // The slot comes back once the server noticed the disconnect. Which of the two submissions is
  // a's depends on which request the server read first, so wait for either to be aborted.
  const auto submitted = engine_->submitted();
  ASSERT_EQ(submitted.size(), 2u);
  bool aborted = false;
  for (int attempt = 0; attempt < 1000 && !aborted; ++attempt) {
    for (const auto& r : submitted) aborted = aborted || engine_->aborted().count(r.request_id) > 0;
    if (!aborted) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(aborted) << "closing a streaming client did not abort its request within 10 s";
  HttpReply ok;
  for (int attempt = 0; attempt < 200; ++attempt) {
    ok = post_json(port_, "/v1/completions", R"({"prompt":"x","max_tokens":1})");
    if (ok.status != 429) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST_F(GatewayServerTest, GoodRequestsCompleteWhileBadOnesFail) {
  std::vector<std::future<HttpReply>> good;
  for (int i = 0; i < 16; ++i) {
    good.push_back(std::async(std::launch::async, [this, i] {
      bool stream = i % 2 == 0;
      return post_json(port_, i % 4 < 2 ? "/v1/completions" : "/v1/chat/completions",
                       i % 4 < 2 ? R"({"prompt":"good","max_tokens":20,"stream":)" + std::string(stream ? "true" : "false") + "}"
                                 : R"({"messages":[{"role":"user","content":"good"}],"max_tokens":20,"stream":)" +
                                       std::string(stream ? "true" : "false") + "}");
    }));
  }
  for (int i = 0; i < 8; ++i) {
    expect_error(post_json(port_, "/v1/completions", "{bad json"), 400, "invalid_request_error");
    expect_error(post_json(port_, "/v1/completions", R"({"prompt":"x","max_tokens":0})"), 400, "invalid_request_error");
    expect_error(post_json(port_, "/v1/completions", R"({"model":"other","prompt":"x"})"), 404, "not_found_error");
    expect_error(post_json(port_, "/v1/completions", R"({"prompt":"TOO_LONG"})"), 400, "invalid_request_error");
  }
  std::string expected;
  for (int k = 0; k < 20; ++k) expected += FakeEngine::token_text(0, k);
  for (int i = 0; i < 16; ++i) {
    HttpReply r = good[i].get();
    ASSERT_EQ(r.status, 200) << r.body;
    std::string text;
    if (i % 2 == 0) {
      auto events = sse_payloads(r.body);
      ASSERT_EQ(events.back(), "[DONE]");
      for (size_t e = 0; e + 1 < events.size(); ++e) {
        json c = json::parse(events[e]);
        const json& choice = c["choices"][0];
        if (choice.contains("text")) text += choice["text"].get<std::string>();
        if (choice.contains("delta") && choice["delta"].contains("content")) text += choice["delta"]["content"].get<std::string>();
      }
    } else {
      json j = r.json();
      text = j["choices"][0].contains("text") ? j["choices"][0]["text"] : j["choices"][0]["message"]["content"];
      EXPECT_EQ(j["usage"]["completion_tokens"], 20);
    }
    EXPECT_EQ(text, expected) << "request " << i;
  }
}

}  // namespace
}  // namespace zinfer::gateway::testing
