// The OpenAI endpoints end to end over a real socket: stream and non-stream, both endpoints,
// SSE framing, usage, n > 1, logprobs, and the GenerateRequest the engine receives.
#include <gtest/gtest.h>

#include "server_fixture.h"

namespace zinfer::gateway::testing {
namespace {

using nlohmann::json;
namespace http = boost::beast::http;

std::string expected_text(int sample, int tokens) {
  std::string s;
  for (int k = 0; k < tokens; ++k) s += FakeEngine::token_text(sample, k);
  return s;
}

TEST_F(GatewayServerTest, CompletionNonStream) {
  auto r = post_json(port_, "/v1/completions",
                     R"({"model":"test-model","prompt":"hello","max_tokens":3,"temperature":0,"seed":7,"top_k":5,
                         "top_p":0.9,"stop":["x","yy"],"ignore_eos":true,"priority":3,"return_token_ids":true,
                         "user":"tenant-a","predicted_output_tokens":3})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  json j = r.json();
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_EQ(j["model"], "test-model");
  EXPECT_GT(j["created"].get<int64_t>(), 1600000000);
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], expected_text(0, 3));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["choices"][0]["token_ids"], json({1000, 1001, 1002}));
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(j["usage"]["total_tokens"], 8);

  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  const auto& g = sent[0];
  EXPECT_NE(g.request_id, 0u);
  EXPECT_EQ(g.prompt, "hello");
  EXPECT_FALSE(g.is_chat);
  EXPECT_EQ(g.sampling.max_tokens, 3);
  EXPECT_EQ(g.sampling.temperature, 0.0f);
  EXPECT_EQ(g.sampling.seed, 7);
  EXPECT_EQ(g.sampling.top_k, 5);
  EXPECT_FLOAT_EQ(g.sampling.top_p, 0.9f);
  EXPECT_EQ(g.sampling.stop, (std::vector<std::string>{"x", "yy"}));
  EXPECT_TRUE(g.sampling.ignore_eos);
  EXPECT_EQ(g.priority, 3);
  EXPECT_GT(g.arrival_ns, 0);
  EXPECT_EQ(g.tenant, "tenant-a");
  EXPECT_EQ(g.predicted_output_tokens, 3);
}

TEST_F(GatewayServerTest, CompletionPromptForms) {
  // Token ids, a batch of one string, a batch of one token-id array.
  auto r1 = post_json(port_, "/v1/completions", R"({"prompt":[5,6,7],"max_tokens":1})");
  auto r2 = post_json(port_, "/v1/completions", R"({"prompt":["one"],"max_tokens":1})");
  auto r3 = post_json(port_, "/v1/completions", R"({"prompt":[[9,8]],"max_tokens":1})");
  ASSERT_EQ(r1.status, 200) << r1.body;
  ASSERT_EQ(r2.status, 200) << r2.body;
  ASSERT_EQ(r3.status, 200) << r3.body;
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].prompt_ids, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_TRUE(sent[0].prompt.empty());
  EXPECT_EQ(sent[1].prompt, "one");
  EXPECT_EQ(sent[2].prompt_ids, (std::vector<int32_t>{9, 8}));
  EXPECT_EQ(r1.json()["usage"]["prompt_tokens"], 3);
  // Unique ids per request.
  EXPECT_NE(sent[0].request_id, sent[1].request_id);
  EXPECT_NE(sent[1].request_id, sent[2].request_id);
}

TEST_F(GatewayServerTest, CompletionStreamFramingAndUsage) {
  auto r = post_json(port_, "/v1/completions",
                     R"({"prompt":"abc","max_tokens":4,"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/event-stream");
  EXPECT_TRUE(r.chunked);
  EXPECT_TRUE(r.keep_alive);
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 6u) << r.body;  // 4 tokens, usage, [DONE]
  std::string text;
  std::string id;
  for (int k = 0; k < 4; ++k) {
    json c = json::parse(events[k]);
    EXPECT_EQ(c["object"], "text_completion");
    if (id.empty()) id = c["id"];
    EXPECT_EQ(c["id"], id);
    ASSERT_EQ(c["choices"].size(), 1u);
    text += c["choices"][0]["text"].get<std::string>();
    EXPECT_EQ(c["choices"][0]["finish_reason"], k == 3 ? json("length") : json(nullptr));
    EXPECT_TRUE(c.contains("usage") && c["usage"].is_null());
  }
  EXPECT_EQ(text, expected_text(0, 4));
  json usage = json::parse(events[4]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 4);
  EXPECT_EQ(usage["usage"]["total_tokens"], 7);
  EXPECT_EQ(events[5], "[DONE]");
}

// The bytes on the wire: a chunked header, chunks that each hold whole server-sent events, then
// the zero-length last chunk right after [DONE].
TEST_F(GatewayServerTest, StreamWireFramingIsWholeEventsPerChunkThenTheLastChunk) {
  HttpConnection c(port_);
  c.send(http::verb::post, "/v1/completions", R"({"prompt":"abc","max_tokens":2,"stream":true})");
  const std::string raw = c.read_until("data: [DONE]\n\n\r\n0\r\n\r\n");
  const size_t header_end = raw.find("\r\n\r\n");
  ASSERT_NE(header_end, std::string::npos) << raw;
  const std::string header = raw.substr(0, header_end + 2);
  EXPECT_EQ(header.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << header;
  EXPECT_NE(header.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << header;
  EXPECT_NE(header.find("Content-Type: text/event-stream\r\n"), std::string::npos) << header;
  EXPECT_NE(header.find("Connection: keep-alive\r\n"), std::string::npos) << header;
  std::vector<std::string> chunks;
  size_t pos = header_end + 4;
  while (true) {
    const size_t line_end = raw.find("\r\n", pos);
    ASSERT_NE(line_end, std::string::npos) << raw;
    const size_t size = std::stoul(raw.substr(pos, line_end - pos), nullptr, 16);
    if (size == 0) {
      EXPECT_EQ(raw.substr(line_end), "\r\n\r\n");  // the last chunk ends the bytes read
      break;
    }
    ASSERT_LE(line_end + 2 + size + 2, raw.size()) << raw;
    chunks.push_back(raw.substr(line_end + 2, size));
    EXPECT_EQ(raw.substr(line_end + 2 + size, 2), "\r\n");
    pos = line_end + 2 + size + 2;
  }
  ASSERT_FALSE(chunks.empty()) << raw;
  std::string body;
  for (const auto& chunk : chunks) {
    const auto events = sse_payloads(chunk);
    ASSERT_FALSE(events.empty()) << chunk;
    EXPECT_EQ(events.back().rfind("<", 0), std::string::npos) << "a chunk that cuts an event: " << chunk;
    body += chunk;
  }
  const auto events = sse_payloads(body);
  ASSERT_EQ(events.size(), 3u) << raw;  // 2 tokens, [DONE]
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_TRUE(chunks.back().ends_with("data: [DONE]\n\n")) << chunks.back();
  // The connection stays usable for the next request.
  auto next = c.request(http::verb::get, "/v1/models");
  EXPECT_EQ(next.status, 200);
}

TEST_F(GatewayServerTest, StreamWithoutUsageHasNoUsageChunk) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"abc","max_tokens":2,"stream":true})");
  ASSERT_EQ(r.status, 200);
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 3u) << r.body;
  EXPECT_FALSE(json::parse(events[0]).contains("usage"));
  EXPECT_EQ(events[2], "[DONE]");
}

TEST_F(GatewayServerTest, ChatNonStream) {
  auto r = post_json(port_, "/v1/chat/completions",
                     R"({"model":"test-model","messages":[{"role":"system","content":"be brief"},
                         {"role":"user","content":[{"type":"text","text":"hi "},{"type":"text","text":"there"}]}],
                         "max_completion_tokens":2,"max_tokens":99,
                         "chat_template_kwargs":{"enable_thinking":false}})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.json();
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], expected_text(0, 2));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 2);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 8 + 8);
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].is_chat);
  ASSERT_EQ(sent[0].messages.size(), 2u);
  EXPECT_EQ(sent[0].messages[0].role, "system");
  EXPECT_EQ(sent[0].messages[1].content, "hi there");
  EXPECT_EQ(sent[0].sampling.max_tokens, 2);  // max_completion_tokens wins
  EXPECT_FALSE(sent[0].enable_thinking);
}

// The logits processing fields travel to the engine over HTTP, from both endpoints.
TEST_F(GatewayServerTest, SamplingFieldsReachTheEngine) {
  auto c = post_json(port_, "/v1/completions",
                     R"({"prompt":"x","max_tokens":2,"repetition_penalty":1.1,"frequency_penalty":0.5,
                         "presence_penalty":-0.5,"min_p":0.2,"logit_bias":{"11":-100,"12":7},"min_tokens":1,
                         "allowed_token_ids":[11,12,13],"bad_words":["bad"],"truncate_prompt_tokens":5})");
  ASSERT_EQ(c.status, 200) << c.body;
  auto chat = post_json(port_, "/v1/chat/completions",
                        R"({"messages":[{"role":"user","content":"x"}],"max_tokens":2,"presence_penalty":1,
                            "logit_bias":{"3":2},"bad_words":["a b"],"min_p":0.1})");
  ASSERT_EQ(chat.status, 200) << chat.body;
  auto sent = engine_->submitted();
  ASSERT_EQ(sent.size(), 2u);
  const auto& s = sent[0].sampling;
  EXPECT_FLOAT_EQ(s.repetition_penalty, 1.1f);
  EXPECT_FLOAT_EQ(s.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(s.presence_penalty, -0.5f);
  EXPECT_FLOAT_EQ(s.min_p, 0.2f);
  ASSERT_EQ(s.logit_bias.size(), 2u);
  EXPECT_EQ(s.allowed_token_ids, (std::vector<int32_t>{11, 12, 13}));
  EXPECT_EQ(s.bad_words, std::vector<std::string>{"bad"});
  EXPECT_EQ(s.truncate_prompt_tokens, 5);
  EXPECT_EQ(s.min_tokens, 1);
  const auto& t = sent[1].sampling;
  EXPECT_FLOAT_EQ(t.presence_penalty, 1.0f);
  ASSERT_EQ(t.logit_bias.size(), 1u);
  EXPECT_EQ(t.logit_bias[0].token, 3);
  EXPECT_EQ(t.bad_words, std::vector<std::string>{"a b"});
  EXPECT_FLOAT_EQ(t.min_p, 0.1f);
}

TEST_F(GatewayServerTest, ChatStreamStartsWithRole) {
  auto r = post_json(port_, "/v1/chat/completions",
                     R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.size(), 5u) << r.body;  // role, 3 tokens, [DONE]
  json first = json::parse(events[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  for (int k = 1; k <= 3; ++k) {
    json c = json::parse(events[k]);
    EXPECT_FALSE(c["choices"][0]["delta"].contains("role"));
    text += c["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(json::parse(events[3])["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(text, expected_text(0, 3));
  EXPECT_EQ(events[4], "[DONE]");
}

TEST_F(GatewayServerTest, ChatDefaultMaxTokensIsTheContext) {
  HttpConnection c(port_);
  c.send(http::verb::post, "/v1/chat/completions", R"({"messages":[{"role":"user","content":"HANG"}],"stream":true})");
  ASSERT_TRUE(engine_->wait_submitted(1, std::chrono::seconds(10)));
  // 0 in the protocol: "until the context is full", resolved once the prompt is tokenized.
  EXPECT_EQ(engine_->submitted()[0].sampling.max_tokens, 0);
  // Completions keep OpenAI's default of 16.
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"x"})");
  EXPECT_EQ(r.json()["usage"]["completion_tokens"], 16);
}

TEST_F(GatewayServerTest, NGreaterThanOneNonStream) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"p","max_tokens":2,"n":3})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.json();
  ASSERT_EQ(j["choices"].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(j["choices"][i]["index"], i);
    EXPECT_EQ(j["choices"][i]["text"], expected_text(i, 2));
  }
  EXPECT_EQ(j["usage"]["prompt_tokens"], 1);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
}

TEST_F(GatewayServerTest, NGreaterThanOneStream) {
  auto r = post_json(port_, "/v1/chat/completions",
                     R"({"messages":[{"role":"user","content":"p"}],"max_tokens":2,"n":2,"stream":true,
                         "stream_options":{"include_usage":true}})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_payloads(r.body);
  ASSERT_EQ(events.back(), "[DONE]");
  std::map<int, std::string> text;
  std::map<int, int> roles, finishes;
  json usage;
  for (size_t e = 0; e + 1 < events.size(); ++e) {
    json c = json::parse(events[e]);
    if (c["choices"].empty()) {
      usage = c["usage"];
      continue;
    }
    int idx = c["choices"][0]["index"];
    const json& delta = c["choices"][0]["delta"];
    if (delta.contains("role")) ++roles[idx];
    if (delta.contains("content")) text[idx] += delta["content"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) ++finishes[idx];
  }
  EXPECT_EQ(roles, (std::map<int, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(finishes, (std::map<int, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(text[0], expected_text(0, 2));
  EXPECT_EQ(text[1], expected_text(1, 2));
  EXPECT_EQ(usage["completion_tokens"], 4);
}

TEST_F(GatewayServerTest, CompletionLogprobs) {
  auto r = post_json(port_, "/v1/completions", R"({"prompt":"p","max_tokens":2,"logprobs":2})");
  ASSERT_EQ(r.status, 200) << r.body;
  json lp = r.json()["choices"][0]["logprobs"];
  // Tokens by their text; the sampled token first among the alternatives, then the best others
  // (logprobs + 1 entries at most); offsets into the choice's text.
  EXPECT_EQ(lp["tokens"], json({"s0t0 ", "s0t1 "}));
  EXPECT_EQ(lp["token_logprobs"], json({-0.25, -0.5}));
  ASSERT_EQ(lp["top_logprobs"].size(), 2u);
  EXPECT_EQ(lp["top_logprobs"][1], json({{"s0t1 ", -0.5}, {"s0t2 ", -1.5}}));
  EXPECT_EQ(lp["text_offset"], json({0, 5}));
  auto sent = engine_->submitted();
  EXPECT_TRUE(sent[0].sampling.logprobs);
  EXPECT_EQ(sent[0].sampling.top_logprobs, 2);
}

TEST_F(GatewayServerTest, ChatLogprobs) {
  auto r = post_json(port_, "/v1/chat/completions",
                     R"({"messages":[{"role":"user","content":"p"}],"max_tokens":1,"logprobs":true,"top_logprobs":1})");
  ASSERT_EQ(r.status, 200) << r.body;
  json content = r.json()["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 1u);
  EXPECT_EQ(content[0]["token"], "s0t0 ");
  EXPECT_EQ(content[0]["bytes"], json({115, 48, 116, 48, 32}));
  EXPECT_EQ(content[0]["logprob"], -0.25);
  ASSERT_EQ(content[0]["top_logprobs"].size(), 1u);
  EXPECT_EQ(content[0]["top_logprobs"][0]["token"], "s0t0 ");
  EXPECT_EQ(content[0]["top_logprobs"][0]["bytes"], json({115, 48, 116, 48, 32}));
}

TEST_F(GatewayServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  HttpConnection c(port_);
  for (int i = 0; i < 3; ++i) {
    auto r = c.request(http::verb::post, "/v1/completions", R"({"prompt":"k","max_tokens":2,"stream":true})");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(sse_payloads(r.body).back(), "[DONE]");
    auto h = c.request(http::verb::get, "/health");
    EXPECT_EQ(h.status, 200);
  }
}

TEST_F(GatewayServerTest, PipelinedRequestsAnswerInOrder) {
  HttpConnection c(port_);
  c.send(http::verb::post, "/v1/completions", R"({"prompt":"a","max_tokens":3})");
  c.send(http::verb::get, "/v1/models");
  auto first = c.read_reply();
  auto second = c.read_reply();
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.json()["choices"][0]["text"], expected_text(0, 3));
  ASSERT_EQ(second.status, 200);
  EXPECT_EQ(second.json()["object"], "list");
}

TEST_F(GatewayServerTest, ModelsAndHealth) {
  auto m = get(port_, "/v1/models");
  ASSERT_EQ(m.status, 200);
  json j = m.json();
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "test-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_EQ(j["data"][0]["max_model_len"], 4096);
  auto h = get(port_, "/health");
  EXPECT_EQ(h.status, 200);
}

}  // namespace
}  // namespace zinfer::gateway::testing
