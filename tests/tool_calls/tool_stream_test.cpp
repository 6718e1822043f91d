// Streaming tool calls: whatever the chunking of the output (every split point, byte by byte),
// the deltas add up to the final message, tags never leak into the content, and each call opens
// with {index, id, type, function: {name, arguments: ""}}.
#include <gtest/gtest.h>

#include <set>

#include "gateway/tool_parsers/tool_parser.h"
#include "gateway/tool_stream.h"

namespace zinfer::gateway {
namespace {

using nlohmann::json;

// What a client rebuilds from the deltas, as the OpenAI SDKs accumulate them.
struct Rebuilt {
  std::string content;
  json calls = json::array();  // [{id, name, arguments}]
};

void add_deltas(const std::vector<json>& deltas, Rebuilt& r) {
  for (const auto& d : deltas) {
    ASSERT_EQ(d.size(), 1u) << d.dump();
    if (d.contains("content")) {
      r.content += d["content"].get<std::string>();
      continue;
    }
    ASSERT_TRUE(d.contains("tool_calls")) << d.dump();
    for (const auto& c : d["tool_calls"]) {
      const size_t index = c["index"].get<size_t>();
      if (c.contains("id")) {
        ASSERT_EQ(index, r.calls.size()) << "calls open in order";
        EXPECT_EQ(c["type"], "function");
        EXPECT_EQ(c["function"]["arguments"], "") << "the first delta of a call carries its name only";
        r.calls.push_back({{"id", c["id"]}, {"name", c["function"]["name"]}, {"arguments", ""}});
      } else {
        ASSERT_LT(index, r.calls.size()) << "arguments of a call that was not opened: " << d.dump();
        EXPECT_FALSE(c["function"].contains("name"));
        r.calls[index]["arguments"] = r.calls[index]["arguments"].get<std::string>() + c["function"]["arguments"].get<std::string>();
      }
    }
  }
}

// Feeds `pieces` and checks the rebuilt stream against the final message.
void check_stream(const tools::ToolParser& parser, const std::vector<std::string>& pieces, size_t max_calls,
                  const std::string& what) {
  SCOPED_TRACE(what);
  ToolCallStream stream(parser, max_calls);
  Rebuilt r;
  for (const auto& piece : pieces) add_deltas(stream.feed(piece), r);
  add_deltas(stream.finish(), r);
  const json content = stream.content();
  EXPECT_EQ(r.content, content.is_null() ? std::string() : content.get<std::string>());
  const json calls = stream.tool_calls();
  ASSERT_EQ(r.calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(r.calls[i]["id"], calls[i]["id"]);
    EXPECT_EQ(r.calls[i]["name"], calls[i]["function"]["name"]);
    EXPECT_EQ(r.calls[i]["arguments"], calls[i]["function"]["arguments"]);
  }
}

void check_all_chunkings(const tools::ToolParser& parser, const std::string& text, size_t max_calls = SIZE_MAX) {
  check_stream(parser, {text}, max_calls, "one piece");
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  check_stream(parser, bytes, max_calls, "byte by byte");
  for (size_t cut = 1; cut < text.size(); ++cut) {
    check_stream(parser, {text.substr(0, cut), text.substr(cut)}, max_calls, "split at " + std::to_string(cut));
  }
}

struct Case {
  const char* parser;
  std::string text;
  size_t calls;
};

TEST(ToolCallStream, AnyChunkingAddsUpToTheFinalMessage) {
  const std::vector<Case> cases = {
      {"hermes", "I'll check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", 1},
      {"hermes",
       "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"q\": \"<tool_call> inside \\\"string\\\"\"}}\n</tool_call>\n"
       "<tool_call>\n{\"name\": \"b\", \"arguments\": {\"n\": [1, 2, {\"x\": \"日本\"}]}}\n</tool_call>",
       2},
      {"hermes", "No tools needed: 2 < 3 and <tool is not a tag.", 0},
      {"hermes", "<tool_call>\n{broken}\n</tool_call> then text", 0},
      {"llama3_json", "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"x\": 1}}; {\"name\": \"g\", \"parameters\": {}}", 2},
      {"llama3_json", "Plain answer.", 0},
      {"mistral", "Sure. [TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {\"a\": \"b\"}}, {\"name\": \"g\", \"arguments\": {}}]", 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.parser) + ": " + c.text);
    const tools::ToolParser& parser = *tools::find_tool_parser(c.parser);
    ToolCallStream whole(parser, SIZE_MAX);
    whole.feed(c.text);
    whole.finish();
    EXPECT_EQ(whole.tool_calls().size(), c.calls);
    check_all_chunkings(parser, c.text);
  }
  check_all_chunkings(*tools::named_call_parser("f"), "{\"city\": \"Paris\", \"days\": [1, 2]}");
  check_all_chunkings(*tools::required_calls_parser(),
                      "[{\"name\": \"f\", \"parameters\": {\"a\": 1}}, {\"name\": \"g\", \"parameters\": {\"b\": \"}]\"}}]");
}

TEST(ToolCallStream, TagsSplitAcrossDeltasNeverReachTheContent) {
  const tools::ToolParser& hermes = *tools::find_tool_parser("hermes");
  ToolCallStream stream(hermes, SIZE_MAX);
  Rebuilt r;
  for (const char* piece : {"Let me see <", "tool", "_ca", "ll>\n{\"na", "me\": \"f\", \"argu", "ments\": {}}\n</tool", "_call>"}) {
    add_deltas(stream.feed(piece), r);
    EXPECT_EQ(r.content.find('<'), std::string::npos) << r.content;
  }
  add_deltas(stream.finish(), r);
  EXPECT_EQ(r.content, "Let me see");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0]["arguments"], "{}");
  EXPECT_TRUE(stream.called());
}

TEST(ToolCallStream, TheFirstDeltaOfACallHasItsIdTypeAndName) {
  ToolCallStream stream(*tools::find_tool_parser("hermes"), SIZE_MAX);
  auto deltas = stream.feed("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"ci");
  ASSERT_EQ(deltas.size(), 2u);
  const json& open = deltas[0]["tool_calls"][0];
  EXPECT_EQ(open["index"], 0);
  EXPECT_TRUE(open["id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(open["type"], "function");
  EXPECT_EQ(open["function"], (json{{"name", "get_weather"}, {"arguments", ""}}));
  EXPECT_EQ(deltas[1], (json{{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "{\"ci"}}}}}}}));
  deltas = stream.feed("ty\": \"Paris\"}}</tool_call>");
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0]["tool_calls"][0]["function"]["arguments"], "ty\": \"Paris\"}");
  EXPECT_TRUE(stream.finish().empty());
  EXPECT_TRUE(stream.content().is_null());
}

TEST(ToolCallStream, ParallelToolCallsFalseKeepsTheFirstCall) {
  const std::string text =
      "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>";
  ToolCallStream stream(*tools::find_tool_parser("hermes"), 1);
  stream.feed(text);
  stream.finish();
  ASSERT_EQ(stream.tool_calls().size(), 1u);
  EXPECT_EQ(stream.tool_calls()[0]["function"]["name"], "a");
  check_all_chunkings(*tools::find_tool_parser("hermes"), text, 1);
}

TEST(ToolCallStream, WithoutCallsTheContentIsTheWholeOutput) {
  ToolCallStream stream(*tools::find_tool_parser("hermes"), SIZE_MAX);
  Rebuilt r;
  add_deltas(stream.feed("Hello  "), r);
  EXPECT_EQ(r.content, "Hello");  // trailing white space waits: a call may follow
  add_deltas(stream.finish(), r);
  EXPECT_EQ(r.content, "Hello  ");
  EXPECT_EQ(stream.content(), "Hello  ");
  EXPECT_EQ(stream.tool_calls(), json::array());
  EXPECT_FALSE(stream.called());
}

TEST(ToolCallStream, IdsAreUniqueAcrossCalls) {
  std::set<std::string> ids;
  const auto parser = tools::required_calls_parser();
  for (int i = 0; i < 50; ++i) {
    ToolCallStream stream(*parser, SIZE_MAX);
    stream.feed("[{\"name\": \"f\", \"parameters\": {}}, {\"name\": \"f\", \"parameters\": {}}]");
    stream.finish();
    for (const auto& call : stream.tool_calls()) ids.insert(call["id"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 100u);
}

}  // namespace
}  // namespace zinfer::gateway
