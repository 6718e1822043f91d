// Server-sent events split across reads, and OpenAI stream chunks of both endpoints.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tools/bench/lib/openai_client.h"
#include "tools/bench/lib/sse.h"

namespace zinfer::bench {
namespace {

std::vector<std::string> parse_in_pieces(const std::string& stream, size_t piece) {
  SseParser p;
  std::vector<std::string> events;
  auto on = [&](std::string_view d) { events.emplace_back(d); };
  for (size_t i = 0; i < stream.size(); i += piece) p.feed(std::string_view(stream).substr(i, piece), on);
  p.finish(on);
  return events;
}

TEST(Sse, EventsSurviveAnySplit) {
  const std::string stream =
      ": keep-alive comment\r\n\r\n"
      "data: {\"a\":1}\r\n\r\n"
      "event: message\ndata: line1\ndata: line2\n\n"
      "data:{\"b\":2}\r\r"
      "data: [DONE]";  // no final blank line: finish() dispatches it
  for (size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    const auto ev = parse_in_pieces(stream, piece);
    ASSERT_EQ(ev.size(), 4u) << "piece " << piece;
    EXPECT_EQ(ev[0], "{\"a\":1}");
    EXPECT_EQ(ev[1], "line1\nline2");
    EXPECT_EQ(ev[2], "{\"b\":2}");
    EXPECT_EQ(ev[3], "[DONE]");
  }
}

TEST(Sse, CompletionChunk) {
  const auto ev = interpret_openai_event(
      R"({"id":"x","choices":[{"index":0,"text":" world","finish_reason":null}],"usage":null})", ApiKind::kCompletions);
  EXPECT_EQ(ev.text, " world");
  EXPECT_FALSE(ev.finish_reason.has_value());
  EXPECT_FALSE(ev.completion_tokens.has_value());
}

TEST(Sse, ChatChunksAndUsage) {
  const auto role = interpret_openai_event(R"({"choices":[{"index":0,"delta":{"role":"assistant"}}]})", ApiKind::kChat);
  EXPECT_TRUE(role.text.empty());  // a role-only chunk carries no token
  EXPECT_FALSE(role.choice);       // and is no event of the answer's tokens
  // A token that adds no text (zinfer streams one event per token) is an event of the choice.
  const auto textless = interpret_openai_event(R"({"choices":[{"index":0,"delta":{}}]})", ApiKind::kChat);
  EXPECT_TRUE(textless.text.empty());
  EXPECT_TRUE(textless.choice);
  const auto content = interpret_openai_event(
      R"({"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"length"}]})", ApiKind::kChat);
  EXPECT_EQ(content.text, "Hi");
  EXPECT_TRUE(content.choice);
  EXPECT_EQ(content.finish_reason.value(), "length");
  const auto usage = interpret_openai_event(
      R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}})", ApiKind::kChat);
  EXPECT_TRUE(usage.text.empty());
  EXPECT_FALSE(usage.choice);
  EXPECT_EQ(usage.completion_tokens.value(), 34);
  EXPECT_EQ(usage.prompt_tokens.value(), 12);
  EXPECT_TRUE(interpret_openai_event("[DONE]", ApiKind::kChat).done);
}

TEST(Sse, ErrorsAndGarbage) {
  const auto err = interpret_openai_event(R"({"error":{"message":"too long","code":400}})", ApiKind::kCompletions);
  EXPECT_EQ(err.error.value(), "too long");
  EXPECT_THROW(interpret_openai_event("{not json", ApiKind::kCompletions), std::runtime_error);
}

TEST(Sse, RequestBodies) {
  const auto c = nlohmann::json::parse(openai_request_body(ApiKind::kCompletions, "m", "hello", 7, true));
  EXPECT_EQ(c["prompt"], "hello");
  EXPECT_EQ(c["max_tokens"], 7);
  EXPECT_EQ(c["stream"], true);
  EXPECT_EQ(c["stream_options"]["include_usage"], true);
  EXPECT_EQ(c["ignore_eos"], true);
  EXPECT_EQ(c["temperature"], 0.0);
  const auto chat = nlohmann::json::parse(openai_request_body(ApiKind::kChat, "m", "hello", 9, false));
  EXPECT_EQ(chat["messages"][0]["role"], "user");
  EXPECT_EQ(chat["messages"][0]["content"], "hello");
  EXPECT_EQ(chat["max_completion_tokens"], 9);
  EXPECT_FALSE(chat.contains("ignore_eos"));
  // Invalid UTF-8 from random token text becomes U+FFFD instead of an exception.
  const auto bad = nlohmann::json::parse(openai_request_body(ApiKind::kCompletions, "m", "a\xff" "b", 1, false));
  EXPECT_EQ(bad["prompt"], "a\xEF\xBF\xBD" "b");
}

TEST(Sse, RequestBodyOptionsAndExtraBody) {
  RequestBodyOptions o;
  o.temperature = 0.7;
  o.top_p = 0.9;
  o.top_k = 20;
  o.min_p = 0.05;
  o.extra_body = parse_extra_body(R"({"response_format": {"type": "json_object"}, "max_tokens": 5, "stream_options": null})");
  const auto c = nlohmann::json::parse(openai_request_body(ApiKind::kCompletions, "m", "hello", 7, false, o));
  EXPECT_DOUBLE_EQ(c["temperature"].get<double>(), 0.7);
  EXPECT_DOUBLE_EQ(c["top_p"].get<double>(), 0.9);
  EXPECT_EQ(c["top_k"], 20);
  EXPECT_DOUBLE_EQ(c["min_p"].get<double>(), 0.05);
  EXPECT_EQ(c["response_format"]["type"], "json_object");
  EXPECT_EQ(c["max_tokens"], 5);  // extra_body's keys replace the benchmark's
  EXPECT_TRUE(c["stream_options"].is_null());
  EXPECT_EQ(c["prompt"], "hello");
  // Without the flags: greedy, and no top_p/top_k/min_p (the server's defaults apply).
  const auto plain = nlohmann::json::parse(openai_request_body(ApiKind::kChat, "m", "hello", 7, false));
  EXPECT_EQ(plain["temperature"], 0.0);
  EXPECT_FALSE(plain.contains("top_p"));
  EXPECT_FALSE(plain.contains("top_k"));
  EXPECT_THROW(parse_extra_body("[1]"), std::invalid_argument);
  EXPECT_THROW(parse_extra_body("{oops"), std::invalid_argument);
}

TEST(Sse, Headers) {
  const auto h = parse_headers({"X-Tenant=a", "Authorization=Bearer k=v"});
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].first, "X-Tenant");
  EXPECT_EQ(h[0].second, "a");
  EXPECT_EQ(h[1].second, "Bearer k=v");
  EXPECT_THROW(parse_headers({"novalue"}), std::invalid_argument);
  EXPECT_THROW(parse_headers({"=x"}), std::invalid_argument);
}

TEST(HttpUrl, Parsing) {
  auto u = parse_http_url("http://127.0.0.1:8000");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, "8000");
  EXPECT_EQ(u.path, "");
  u = parse_http_url("http://example.org/v1/");
  EXPECT_EQ(u.host, "example.org");
  EXPECT_EQ(u.port, "80");
  EXPECT_EQ(u.path, "/v1");
  EXPECT_THROW(parse_http_url("https://x"), std::invalid_argument);
  EXPECT_THROW(parse_http_url("localhost:8000"), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::bench
