// The tool fields of a chat request: what is accepted, what is refused (a 400 naming the field),
// and what a forced choice asks of the grammar.
#include <gtest/gtest.h>

#include "gateway/api_error.h"
#include "gateway/openai_request.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

HttpOptions options(const std::string& parser = "hermes", bool auto_choice = true) {
  HttpOptions o;
  o.served_model_name = "m";
  o.max_model_len = 1000;
  o.tool_call_parser = parser;
  o.enable_auto_tool_choice = auto_choice;
  return o;
}

const char* kWeather = R"({"type": "function", "function": {"name": "get_weather", "description": "Weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
                   "required": ["city"]}}})";
const char* kTime = R"({"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
    "properties": {"zone": {"type": "string"}}}}})";

std::string body(const std::string& extra) {
  return R"({"messages": [{"role": "user", "content": "hi"}], "tools": [)" + std::string(kWeather) + "," + kTime + "]" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

OpenAiRequest parse(const std::string& text, const HttpOptions& o = options()) {
  return parse_openai_request(ApiKind::kChat, text, o);
}

// The param of the 400 the body gets ("" when accepted).
std::string refused(const std::string& text, const HttpOptions& o = options()) {
  try {
    parse(text, o);
    return "";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400) << e.what();
    return e.param();
  }
}

TEST(ToolRequest, ToolsWithoutAChoiceMeanAutoWithTheConfiguredParser) {
  const auto r = parse(body(""));
  EXPECT_EQ(r.tools.choice, ToolRequest::Choice::kAuto);
  ASSERT_NE(r.tools.parser, nullptr);
  EXPECT_EQ(r.tools.parser->name(), "hermes");
  EXPECT_FALSE(r.request.sampling.structured.has_value());
  EXPECT_FALSE(r.request.sampling.skip_special_tokens);  // the parser must see its tags
  // The template gets the tools as sent, key order included.
  EXPECT_EQ(ordered_json::parse(r.request.tools), ordered_json::parse(std::string("[") + kWeather + "," + kTime + "]"));
  EXPECT_LT(r.request.tools.find("\"type\""), r.request.tools.find("\"function\""));
  EXPECT_LT(r.request.tools.find("\"description\""), r.request.tools.find("\"parameters\""));
}

TEST(ToolRequest, AutoNeedsTheServerToEnableIt) {
  EXPECT_EQ(refused(body(""), options("", false)), "tool_choice");
  EXPECT_EQ(refused(body(R"("tool_choice": "auto")"), options("hermes", false)), "tool_choice");
  try {
    parse(body(""), options("", false));
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("--enable-auto-tool-choice"), std::string::npos) << e.what();
  }
  // The other choices need no parser.
  EXPECT_EQ(refused(body(R"("tool_choice": "none")"), options("", false)), "");
  EXPECT_EQ(refused(body(R"("tool_choice": "required")"), options("", false)), "");
}

TEST(ToolRequest, NoneStillRendersTheToolsButParsesNothing) {
  const auto r = parse(body(R"("tool_choice": "none")"));
  EXPECT_EQ(r.tools.choice, ToolRequest::Choice::kNone);
  EXPECT_EQ(r.tools.parser, nullptr);
  EXPECT_FALSE(r.request.tools.empty());
  EXPECT_TRUE(r.request.sampling.skip_special_tokens);
}

TEST(ToolRequest, RequiredAsksTheGrammarForAListOfCalls) {
  auto r = parse(body(R"("tool_choice": "required")"));
  ASSERT_TRUE(r.request.sampling.structured.has_value());
  EXPECT_EQ(r.request.sampling.structured->kind, protocol::StructuredKind::kJsonSchema);
  const json schema = json::parse(r.request.sampling.structured->text);
  EXPECT_EQ(schema["type"], "array");
  EXPECT_EQ(schema["minItems"], 1);
  EXPECT_FALSE(schema.contains("maxItems"));
  ASSERT_EQ(schema["items"]["anyOf"].size(), 2u);
  const json& weather = schema["items"]["anyOf"][0];
  EXPECT_EQ(weather["properties"]["name"]["enum"], json::array({"get_weather"}));
  EXPECT_EQ(weather["properties"]["parameters"], json::parse(kWeather)["function"]["parameters"]);
  EXPECT_EQ(weather["required"], json::array({"name", "parameters"}));
  EXPECT_EQ(weather["additionalProperties"], false);
  EXPECT_EQ(r.tools.parser->name(), "required");

  r = parse(body(R"("tool_choice": "required", "parallel_tool_calls": false)"));
  EXPECT_EQ(json::parse(r.request.sampling.structured->text)["maxItems"], 1);
  EXPECT_EQ(r.tools.max_calls(), 1u);
}

TEST(ToolRequest, ANamedFunctionAsksForItsArguments) {
  const auto r = parse(body(R"("tool_choice": {"type": "function", "function": {"name": "get_time"}})"));
  EXPECT_EQ(r.tools.choice, ToolRequest::Choice::kNamed);
  EXPECT_EQ(r.tools.function, "get_time");
  EXPECT_EQ(json::parse(r.request.sampling.structured->text), json::parse(kTime)["function"]["parameters"]);
  EXPECT_EQ(r.tools.parser->name(), "named");
  // A function without parameters takes an empty object.
  const auto bare = parse(R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function", "function": {"name": "ping"}}],
      "tool_choice": {"type": "function", "function": {"name": "ping"}}})");
  EXPECT_EQ(json::parse(bare.request.sampling.structured->text), (json{{"type", "object"}, {"properties", json::object()}}));
}

TEST(ToolRequest, BadToolsAndChoicesAreRefusedByName) {
  const std::string msgs = R"({"messages": [{"role": "user", "content": "x"}], )";
  EXPECT_EQ(refused(msgs + R"("tools": {}})"), "tools");
  EXPECT_EQ(refused(msgs + R"("tools": [3]})"), "tools[0]");
  EXPECT_EQ(refused(msgs + R"("tools": [{"type": "retrieval", "function": {"name": "f"}}]})"), "tools[0].type");
  EXPECT_EQ(refused(msgs + R"("tools": [{"type": "function"}]})"), "tools[0].function");
  EXPECT_EQ(refused(msgs + R"("tools": [{"type": "function", "function": {"name": ""}}]})"), "tools[0].function.name");
  EXPECT_EQ(refused(msgs + R"("tools": [{"type": "function", "function": {"name": "f", "parameters": "x"}}]})"),
            "tools[0].function.parameters");
  EXPECT_EQ(refused(msgs + R"("tools": [{"type": "function", "function": {"name": "f", "params": {}}}]})"),
            "tools[0].function.params");
  EXPECT_EQ(refused(msgs + R"("tools": [{"type": "function", "function": {"name": "f"}},
                                          {"type": "function", "function": {"name": "f"}}]})"),
            "tools[1].function.name");
  EXPECT_EQ(refused(body(R"("tool_choice": "sometimes")")), "tool_choice");
  EXPECT_EQ(refused(body(R"("tool_choice": {"type": "function", "function": {"name": "nope"}})")),
            "tool_choice.function.name");
  EXPECT_EQ(refused(body(R"("tool_choice": {"type": "code"})")), "tool_choice.type");
  EXPECT_EQ(refused(body(R"("parallel_tool_calls": "yes")")), "parallel_tool_calls");
  EXPECT_EQ(refused(msgs + R"("tool_choice": "required"})"), "tool_choice");  // nothing to call
  EXPECT_EQ(refused(msgs + R"("tool_choice": "none"})"), "");
  EXPECT_EQ(refused(msgs + R"("tools": []})"), "");  // no tools: nothing to do
  // The deprecated function-calling fields stay refused.
  EXPECT_EQ(refused(msgs + R"("functions": [{"name": "f"}]})"), "functions");
}

TEST(ToolRequest, HistoryWithCallsAndResultsIsAccepted) {
  const auto r = parse(R"({"messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [
         {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
         {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": ""}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "21C"},
      {"role": "tool", "tool_call_id": "call_2", "name": "get_time", "content": "noon"}],
      "tools": [)" + std::string(kWeather) + "," + kTime + R"(], "tool_choice": "none"})");
  const auto& m = r.request.messages;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1].content, "");
  ASSERT_EQ(m[1].tool_calls.size(), 2u);
  EXPECT_EQ(m[1].tool_calls[0].id, "call_1");
  EXPECT_EQ(m[1].tool_calls[0].name, "get_weather");
  EXPECT_EQ(m[1].tool_calls[0].arguments, "{\"city\": \"Paris\"}");
  EXPECT_EQ(m[1].tool_calls[1].arguments, "{}");  // empty arguments are an empty object, as vLLM reads them
  EXPECT_EQ(m[2].tool_call_id, "call_1");
  EXPECT_EQ(m[3].name, "get_time");
}

TEST(ToolRequest, BadHistoryFieldsAreRefusedByName) {
  auto with = [](const std::string& message) {
    return R"({"messages": [{"role": "user", "content": "x"}, )" + message + "]}";
  };
  EXPECT_EQ(refused(with(R"({"role": "assistant", "tool_calls": [{"id": "a", "type": "function",
      "function": {"name": "f", "arguments": "{not json"}}]})")), "messages[1].tool_calls[0].function.arguments");
  EXPECT_EQ(refused(with(R"({"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]})")),
            "messages[1].tool_calls[0].function.name");
  EXPECT_EQ(refused(with(R"({"role": "assistant", "tool_calls": {}})")), "messages[1].tool_calls");
  EXPECT_EQ(refused(with(R"({"role": "user", "content": "x", "tool_calls": []})")), "messages[1].tool_calls");
  EXPECT_EQ(refused(with(R"({"role": "user", "content": "x", "tool_call_id": "a"})")), "messages[1].tool_call_id");
  EXPECT_EQ(refused(with(R"({"role": "tool", "content": "x", "tool_call_id": 3})")), "messages[1].tool_call_id");
  EXPECT_EQ(refused(with(R"({"role": "tool", "content": "x", "weight": 3})")), "messages[1].weight");
}

TEST(ToolRequest, ForcedCallsDoNotMixWithOtherConstraints) {
  // Whatever else put a constraint on the output first, a forced call does not silently replace it.
  protocol::GenerateRequest request;
  request.sampling.structured = protocol::StructuredOutput{};
  const json b = json::parse(body(R"("tool_choice": "required")"));
  try {
    parse_tool_request(b, body(R"("tool_choice": "required")"), options(), request);
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "tool_choice");
  }
}

TEST(ToolRequest, AForcedToolWhoseParametersDoNotCompileIsRefusedByItsField) {
  // `not` is a keyword the grammar engine does not compile: a forced call through that tool is a
  // 400 naming its parameters; another tool, or tool_choice auto (no grammar), is unaffected.
  const std::string odd = R"({"type": "function", "function": {"name": "odd", "parameters": {"type": "object",
      "properties": {"x": {"not": {"type": "string"}}}}}})";
  auto with_odd = [&](const std::string& extra) {
    return R"({"messages": [{"role": "user", "content": "hi"}], "tools": [)" + std::string(kWeather) + "," + odd +
           "], " + extra + "}";
  };
  EXPECT_EQ(refused(with_odd(R"("tool_choice": "required")")), "tools[1].function.parameters");
  EXPECT_EQ(refused(with_odd(R"("tool_choice": {"type": "function", "function": {"name": "odd"}})")),
            "tools[1].function.parameters");
  EXPECT_EQ(refused(with_odd(R"("tool_choice": {"type": "function", "function": {"name": "get_weather"}})")), "");
  EXPECT_EQ(refused(with_odd(R"("tool_choice": "auto")")), "");
}

TEST(ToolRequest, ZeroMqRequestsMayCarryToolsOnlyWithMessages) {
  protocol::GenerateRequest r;
  r.prompt = "x";
  r.tools = "[]";
  try {
    validate_generate_request(r, 100);
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "tools");
  }
}

TEST(ToolSettings, AnUnknownParserOrAutoWithoutAParserIsAStartUpError) {
  EXPECT_EQ(check_tool_settings(options("hermes", true)), "");
  EXPECT_EQ(check_tool_settings(options("", false)), "");
  EXPECT_NE(check_tool_settings(options("qwen9", false)).find("unknown tool_call_parser 'qwen9'"), std::string::npos);
  EXPECT_NE(check_tool_settings(options("", true)).find("--tool-call-parser"), std::string::npos);
}

}  // namespace
}  // namespace zinfer::gateway
