// A chat request with tools, answered by Generation from engine deltas that split the model's
// output anywhere: the non-stream message has content (null when only calls) and tool_calls with
// finish_reason "tool_calls"; the stream carries the same as vLLM streams it.
#include <gtest/gtest.h>

#include "gateway/generation.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

HttpOptions options() {
  HttpOptions o;
  o.served_model_name = "m";
  o.max_model_len = 1000;
  o.tool_call_parser = "hermes";
  o.enable_auto_tool_choice = true;
  return o;
}

std::string chat_body(bool stream, int n, const std::string& extra = "") {
  return R"({"messages": [{"role": "user", "content": "weather?"}], "n": )" + std::to_string(n) +
         R"(, "stream": )" + (stream ? "true" : "false") +
         R"(, "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])" +
         extra + "}";
}

protocol::TextDelta delta(int index, const std::string& text, const std::string& finish = "") {
  protocol::TextDelta d;
  d.index = index;
  d.text = text;
  d.token_ids = {static_cast<int32_t>(text.size())};
  d.finish_reason = finish;
  d.completion_tokens = 1;
  return d;
}

// The JSON events of a stream's data.
std::vector<json> events(const std::string& data) {
  std::vector<json> out;
  size_t pos = 0;
  while ((pos = data.find("data: ", pos)) != std::string::npos) {
    const size_t end = data.find("\n\n", pos);
    const std::string payload = data.substr(pos + 6, end - pos - 6);
    if (payload != "[DONE]") out.push_back(json::parse(payload));
    pos = end;
  }
  return out;
}

const std::vector<std::string> kOutput = {"Checking.\n<tool", "_call>\n{\"name\": \"get_", "weather\", \"arguments\": {\"ci",
                                          "ty\": \"Paris\"}}\n</tool_call>"};

TEST(GenerationTools, NonStreamMessageHasTheCalls) {
  Metrics metrics;
  Generation g(parse_openai_request(ApiKind::kChat, chat_body(false, 2), options()), {7}, metrics, {});
  Generation::Reaction r;
  for (int i = 0; i < 2; ++i) {
    for (size_t k = 0; k < kOutput.size(); ++k) {
      // Sample 1 ends with plain text instead of a call.
      const std::string text = i == 1 ? (k == 0 ? "No call" : "") : kOutput[k];
      r = g.on_event(7, delta(i, text, k + 1 == kOutput.size() ? "stop" : ""));
    }
  }
  ASSERT_EQ(r.kind, Generation::Reaction::Kind::kBody);
  const json body = json::parse(r.data);
  const json& called = body["choices"][0];
  EXPECT_EQ(called["finish_reason"], "tool_calls");
  EXPECT_EQ(called["message"]["content"], "Checking.");
  ASSERT_EQ(called["message"]["tool_calls"].size(), 1u);
  const json& call = called["message"]["tool_calls"][0];
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(call["function"]["arguments"].get<std::string>()), (json{{"city", "Paris"}}));
  const json& plain = body["choices"][1];
  EXPECT_EQ(plain["finish_reason"], "stop");
  EXPECT_EQ(plain["message"]["content"], "No call");
  EXPECT_FALSE(plain["message"].contains("tool_calls"));
}

TEST(GenerationTools, StreamSendsNameThenArgumentDeltas) {
  Metrics metrics;
  Generation g(parse_openai_request(ApiKind::kChat, chat_body(true, 1, R"(, "stream_options": {"include_usage": true})"),
                                    options()),
               {8}, metrics, {});
  std::string data;
  for (size_t k = 0; k < kOutput.size(); ++k) {
    data += g.on_event(8, delta(0, kOutput[k], k + 1 == kOutput.size() ? "stop" : "")).data;
  }
  std::string content, arguments, id, name, finish;
  int opened = 0;
  for (const json& e : events(data)) {
    if (e["choices"].empty()) continue;  // the usage chunk
    const json& c = e["choices"][0];
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
    const json& d = c["delta"];
    if (d.contains("content")) content += d["content"].get<std::string>();
    if (!d.contains("tool_calls")) continue;
    const json& t = d["tool_calls"][0];
    EXPECT_EQ(t["index"], 0);
    if (t.contains("id")) {
      ++opened;
      id = t["id"];
      name = t["function"]["name"];
      EXPECT_EQ(t["type"], "function");
    }
    arguments += t["function"]["arguments"].get<std::string>();
  }
  EXPECT_EQ(content, "Checking.");
  EXPECT_EQ(opened, 1);
  EXPECT_TRUE(id.starts_with("call_"));
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(arguments, "{\"city\": \"Paris\"}");
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_NE(data.find("\"completion_tokens\":4"), std::string::npos) << "usage counts every token";
}

TEST(GenerationTools, ANamedCallStreamsTheWholeOutputAsArguments) {
  Metrics metrics;
  Generation g(parse_openai_request(
                   ApiKind::kChat,
                   chat_body(true, 1, R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})"),
                   options()),
               {9}, metrics, {});
  std::string data = g.on_event(9, delta(0, "{\"city\"")).data;
  data += g.on_event(9, delta(0, ": \"Oslo\"}", "stop")).data;
  std::string arguments, finish;
  for (const json& e : events(data)) {
    const json& c = e["choices"][0];
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
    if (c["delta"].contains("tool_calls")) arguments += c["delta"]["tool_calls"][0]["function"]["arguments"].get<std::string>();
    EXPECT_FALSE(c["delta"].contains("content") && !c["delta"]["content"].get<std::string>().empty()) << e.dump();
  }
  EXPECT_EQ(arguments, "{\"city\": \"Oslo\"}");
  EXPECT_EQ(finish, "tool_calls");
}

TEST(GenerationTools, AForcedCallCutByMaxTokensIsLeftAsContent) {
  Metrics metrics;
  Generation g(parse_openai_request(ApiKind::kChat, chat_body(false, 1, R"(, "tool_choice": "required")"), options()),
               {10}, metrics, {});
  const auto r = g.on_event(10, delta(0, "[{\"name\": \"get_weather\", \"parameters\": {\"ci", "length"));
  const json body = json::parse(r.data);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "[{\"name\": \"get_weather\", \"parameters\": {\"ci");
  EXPECT_FALSE(body["choices"][0]["message"].contains("tool_calls"));
}

}  // namespace
}  // namespace zinfer::gateway
