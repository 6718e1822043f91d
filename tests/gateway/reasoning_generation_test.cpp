// A chat generation with a reasoning parser: the response's message and the stream's deltas carry
// reasoning_content and content as vLLM gives them, per choice, with the tags cut anywhere by
// the deltas.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gateway/generation.h"
#include "gateway/openai_request.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

OpenAiRequest chat_request(const std::string& parser, json extra) {
  HttpOptions o;
  o.served_model_name = "m";
  o.reasoning_parser = parser;
  json body = {{"messages", json::array({{{"role", "user"}, {"content", "q"}}})}};
  body.update(extra);
  return parse_openai_request(ApiKind::kChat, body.dump(), o);
}

protocol::TextDelta delta(int index, std::string text, bool last = false) {
  protocol::TextDelta d;
  d.index = index;
  d.text = std::move(text);
  d.token_ids = {1};
  if (last) d.finish_reason = "stop";
  return d;
}

// Runs the deltas through a Generation; returns what it sent (the body, or the stream's events).
std::string run(OpenAiRequest req, const std::vector<protocol::TextDelta>& deltas) {
  Metrics metrics;
  Generation g(std::move(req), {7}, metrics, InFlightLimiter::Token());
  std::string sent;
  for (const auto& d : deltas) sent += g.on_event(7, EngineEvent(d)).data;
  return sent;
}

// The stream's chat deltas per choice, in order.
std::vector<std::vector<json>> stream_deltas(const std::string& sent, size_t choices) {
  std::vector<std::vector<json>> out(choices);
  size_t pos = 0;
  while ((pos = sent.find("data: ", pos)) != std::string::npos) {
    const size_t end = sent.find("\n\n", pos);
    const std::string payload = sent.substr(pos + 6, end - pos - 6);
    pos = end;
    if (payload == "[DONE]") break;
    const json chunk = json::parse(payload);
    for (const auto& c : chunk["choices"]) out[c["index"].get<size_t>()].push_back(c["delta"]);
  }
  return out;
}

std::string joined(const std::vector<json>& deltas, const char* key) {
  std::string s;
  for (const auto& d : deltas) {
    if (d.contains(key)) s += d[key].get<std::string>();
  }
  return s;
}

TEST(ReasoningGeneration, NonStreamMessageSplitsEachChoice) {
  const std::string sent = run(chat_request("qwen3", {{"n", 2}}),
                               {delta(0, "<think>plan</think>"), delta(1, "only reasoning"), delta(0, "answer", true),
                                delta(1, " cut", true)});
  const json body = json::parse(sent);
  EXPECT_EQ(body["choices"][0]["message"]["reasoning_content"], "plan");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "answer");
  EXPECT_EQ(body["choices"][1]["message"]["reasoning_content"], "only reasoning cut");
  EXPECT_TRUE(body["choices"][1]["message"]["content"].is_null());
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
}

TEST(ReasoningGeneration, WithoutAParserTheMessageIsUnchanged) {
  const json body = json::parse(run(chat_request("", json::object()), {delta(0, "<think>a</think>b", true)}));
  EXPECT_EQ(body["choices"][0]["message"]["content"], "<think>a</think>b");
  EXPECT_FALSE(body["choices"][0]["message"].contains("reasoning_content"));
}

TEST(ReasoningGeneration, ThinkingOffIsAllContent) {
  const json body = json::parse(run(chat_request("qwen3", {{"chat_template_kwargs", {{"enable_thinking", false}}}}),
                                    {delta(0, "{\"a\": 1}", true)}));
  EXPECT_EQ(body["choices"][0]["message"]["content"], "{\"a\": 1}");
  EXPECT_TRUE(body["choices"][0]["message"]["reasoning_content"].is_null());
}

TEST(ReasoningGeneration, IncludeReasoningFalseDropsIt) {
  const json body = json::parse(
      run(chat_request("deepseek_r1", {{"include_reasoning", false}}), {delta(0, "hmm</think>yes", true)}));
  EXPECT_EQ(body["choices"][0]["message"]["content"], "yes");
  EXPECT_TRUE(body["choices"][0]["message"]["reasoning_content"].is_null());
}

// The stream: reasoning_content deltas, then content deltas; a tag cut by the deltas never shows.
TEST(ReasoningGeneration, StreamDeltasCarryReasoningThenContent) {
  const std::string sent =
      run(chat_request("qwen3", {{"stream", true}, {"n", 2}}),
          {delta(0, "<thi"), delta(1, "a</"), delta(0, "nk>step one, "), delta(1, "think"), delta(0, "step two</th"),
           delta(1, ">{\"x\""), delta(0, "ink>\n\nDone"), delta(1, ": 1}", true), delta(0, ".", true)});
  const auto deltas = stream_deltas(sent, 2);
  // The role chunk first.
  EXPECT_EQ(deltas[0][0]["role"], "assistant");
  EXPECT_EQ(joined(deltas[0], "reasoning_content"), "step one, step two");
  EXPECT_EQ(joined(deltas[0], "content"), "\n\nDone.");
  EXPECT_EQ(joined(deltas[1], "reasoning_content"), "a");
  EXPECT_EQ(joined(deltas[1], "content"), "{\"x\": 1}");
  // Ordered: no reasoning after the first content.
  for (const auto& choice : deltas) {
    bool content_seen = false;
    for (size_t i = 1; i < choice.size(); ++i) {
      if (choice[i].contains("content")) content_seen = true;
      if (content_seen) EXPECT_FALSE(choice[i].contains("reasoning_content")) << choice[i].dump();
      for (const char* key : {"content", "reasoning_content"}) {
        if (choice[i].contains(key)) EXPECT_EQ(choice[i][key].get<std::string>().find("think"), std::string::npos);
      }
    }
  }
}

TEST(ReasoningGeneration, StreamFlushesHeldTextAtTheEnd) {
  const auto deltas = stream_deltas(run(chat_request("qwen3", {{"stream", true}}), {delta(0, "why </thi"), delta(0, "", true)}), 1);
  EXPECT_EQ(joined(deltas[0], "reasoning_content"), "why </thi");
  EXPECT_EQ(joined(deltas[0], "content"), "");
}

}  // namespace
}  // namespace zinfer::gateway
