// Each tool parser's decisions on whole outputs: calls found, content kept, malformed calls left
// as content; and on prefixes (what a stream may already send).
#include <gtest/gtest.h>

#include "gateway/tool_parsers/tool_parser.h"

namespace zinfer::gateway::tools {
namespace {

const ToolParser& parser(const char* name) {
  const ToolParser* p = find_tool_parser(name);
  if (!p) throw std::runtime_error(std::string("no parser ") + name);
  return *p;
}

struct Call {
  std::string name, arguments;
  bool operator==(const Call&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Call& c) { return os << c.name << "(" << c.arguments << ")"; }

std::vector<Call> calls_of(const ParsedOutput& out) {
  std::vector<Call> calls;
  for (const auto& c : out.calls) calls.push_back({c.name, c.arguments});
  return calls;
}

TEST(ToolParserRegistry, KnowsTheBuiltInParsersByName) {
  EXPECT_EQ(tool_parser_names(), (std::vector<std::string>{"hermes", "llama3_json", "mistral"}));
  for (const auto& name : tool_parser_names()) EXPECT_EQ(find_tool_parser(name)->name(), name);
  EXPECT_EQ(find_tool_parser("hermes2"), nullptr);
  EXPECT_EQ(find_tool_parser(""), nullptr);
}

TEST(ToolParserContent, WhiteSpaceNextToCallsIsFormatting) {
  ParsedOutput none;
  none.texts = {"  text \n"};
  EXPECT_EQ(none.content(true), "  text \n");  // no call: the output as it is
  EXPECT_EQ(none.content(false), "  text");    // a stream holds trailing white space back
  ParsedOutput two;
  two.texts = {" before \n", "\n", " between ", "\nafter\n"};
  two.calls = {{"f", "{}"}, {"g", "{}"}, {"h", "{}"}};
  EXPECT_EQ(two.content(true), " beforebetweenafter");
}

TEST(HermesParser, FindsCallsAndKeepsTheTextBefore) {
  const auto out = parser("hermes").parse(
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"get_weather", "{\"city\": \"Paris\"}"}}));
  EXPECT_EQ(out.content(true), "Let me check.");
}

TEST(HermesParser, FindsSeveralCalls) {
  const std::string text =
      "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
      "<tool_call>\n{\"arguments\": {\"deep\": {\"list\": [1, {\"x\": \"}\"}]}}, \"name\": \"b\"}\n</tool_call>";
  const auto out = parser("hermes").parse(text, true);
  EXPECT_EQ(calls_of(out),
            (std::vector<Call>{{"a", "{}"}, {"b", "{\"deep\": {\"list\": [1, {\"x\": \"}\"}]}}"}}));
  EXPECT_EQ(out.content(true), "");
}

TEST(HermesParser, TextWithoutCallsIsContentAsItIs) {
  const auto out = parser("hermes").parse("Just text, <b>no</b> calls.\n", true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content(true), "Just text, <b>no</b> calls.\n");
}

TEST(HermesParser, MalformedBlocksStayContent) {
  const auto& p = parser("hermes");
  for (const std::string text : {
           "<tool_call>\n{not json}\n</tool_call>",
           "<tool_call>\n{\"arguments\": {}}\n</tool_call>",                        // no name
           "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",                          // no arguments
           "<tool_call>\n{\"name\": 3, \"arguments\": {}}\n</tool_call>",           // name not a string
           "<tool_call>\n{\"name\": \"f\", \"arguments\": {}} extra\n</tool_call>",  // text after the object
           "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": tru}}\n</tool_call>",
           "<tool_call>\n{\"name\": \"f\", \"argu",                                 // cut inside the object
       }) {
    const auto out = p.parse(text, true);
    EXPECT_TRUE(out.calls.empty()) << text;
    EXPECT_EQ(out.content(true), text);
  }
}

TEST(HermesParser, AMalformedBlockDoesNotHideTheValidOnes) {
  const auto out = parser("hermes").parse(
      "A <tool_call>{bad}</tool_call> B <tool_call>{\"name\": \"f\", \"arguments\": {\"k\": \"v\"}}</tool_call> C", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"f", "{\"k\": \"v\"}"}}));
  EXPECT_EQ(out.content(true), "A <tool_call>{bad}</tool_call> BC");
}

TEST(HermesParser, ACallCutBeforeItsClosingTagStillCounts) {
  const auto& p = parser("hermes");
  for (const std::string tail : {"", "\n", "\n</tool_", "\n</tool_call"}) {
    const auto out = p.parse("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}" + tail, true);
    EXPECT_EQ(calls_of(out), (std::vector<Call>{{"f", "{\"x\": 1}"}})) << tail;
  }
}

TEST(HermesParser, PrefixesHoldBackWhatMayBeATag) {
  const auto& p = parser("hermes");
  auto prefix = p.parse("Checking <tool_", false);
  EXPECT_TRUE(prefix.calls.empty());
  EXPECT_EQ(prefix.content(false), "Checking");
  prefix = p.parse("<tool_call>\n{\"name\": \"get_", false);
  EXPECT_TRUE(prefix.calls.empty());  // the name is not complete
  prefix = p.parse("<tool_call>\n{\"name\": \"get\", \"arguments\": {\"city\": \"Pa", false);
  EXPECT_EQ(calls_of(prefix), (std::vector<Call>{{"get", "{\"city\": \"Pa"}}));
  prefix = p.parse("<tool_call>\n{\"name\": \"get\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\nDone", false);
  EXPECT_EQ(calls_of(prefix), (std::vector<Call>{{"get", "{\"city\": \"Paris\"}"}}));
  EXPECT_EQ(prefix.content(false), "Done");
}

TEST(HermesParser, UnicodeAndEscapesPassThroughUnchanged) {
  const std::string args = R"({"text": "日本語 \"quoted\" \u00e9 😀", "n": -1.5e3, "ok": [true, false, null]})";
  const auto out = parser("hermes").parse("<tool_call>{\"name\": \"say\", \"arguments\": " + args + "}</tool_call>", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"say", args}}));
}

TEST(Llama3JsonParser, ReadsCallsWithOrWithoutThePythonTag) {
  const auto& p = parser("llama3_json");
  auto out = p.parse("<|python_tag|>{\"name\": \"f\", \"parameters\": {\"x\": 1}}", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"f", "{\"x\": 1}"}}));
  EXPECT_EQ(out.content(true), "");
  out = p.parse("{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\", \"arguments\": {\"y\": \"z\"}}", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"f", "{}"}, {"g", "{\"y\": \"z\"}"}}));
}

TEST(Llama3JsonParser, AnythingElseIsContent) {
  const auto& p = parser("llama3_json");
  for (const std::string text : {
           "Hello {\"name\": \"f\", \"parameters\": {}}",           // text first
           "{\"name\": \"f\"}",                                      // no parameters
           "{\"name\": \"f\", \"parameters\": {}} and more",         // not separated by ';'
           "{\"name\": \"f\", \"parameters\": {}}; oops",
           "{\"name\": \"f\", \"parameters\": {",                    // cut
           "<|python_tag|>",
       }) {
    const auto out = p.parse(text, true);
    EXPECT_TRUE(out.calls.empty()) << text;
    EXPECT_EQ(out.content(true), text);
  }
}

TEST(Llama3JsonParser, PrefixesWaitForTheFirstCharacter) {
  const auto& p = parser("llama3_json");
  EXPECT_EQ(p.parse("<|pyth", false).content(false), "");
  EXPECT_EQ(p.parse("  ", false).content(false), "");
  EXPECT_EQ(p.parse("{\"name\": \"f\", \"par", false).content(false), "");
  EXPECT_EQ(calls_of(p.parse("{\"name\": \"f\", \"parameters\": {\"a\"", false)), (std::vector<Call>{{"f", "{\"a\""}}));
  EXPECT_EQ(p.parse("Sure", false).content(false), "Sure");
}

TEST(MistralParser, ReadsTheListAfterTheTag) {
  const auto& p = parser("mistral");
  auto out = p.parse("[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {\"a\": 1}}, {\"name\": \"g\", \"arguments\": {}}]", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"f", "{\"a\": 1}"}, {"g", "{}"}}));
  EXPECT_EQ(out.content(true), "");
  out = p.parse("Let me look.[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]", true);
  EXPECT_EQ(out.content(true), "Let me look.");
  EXPECT_EQ(calls_of(out).size(), 1u);
}

TEST(MistralParser, MalformedListsAreContent) {
  const auto& p = parser("mistral");
  for (const std::string text : {"[TOOL_CALLS] [{\"name\": 1, \"arguments\": {}}]", "[TOOL_CALLS] {\"name\": \"f\"}",
                                 "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}", "[TOOL_CALLS]"}) {
    const auto out = p.parse(text, true);
    EXPECT_TRUE(out.calls.empty()) << text;
    EXPECT_EQ(out.content(true), text);
  }
}

TEST(MistralParser, IdsAreNineLettersOrDigits) {
  const std::string id = parser("mistral").call_id();
  ASSERT_EQ(id.size(), 9u);
  for (char c : id) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << id;
  const std::string other = parser("hermes").call_id();
  EXPECT_TRUE(other.starts_with("call_")) << other;
  EXPECT_EQ(other.size(), 29u);
  EXPECT_NE(other, parser("hermes").call_id());
}

TEST(ForcedParsers, ANamedCallIsTheWholeOutput) {
  const auto p = named_call_parser("get_weather");
  auto out = p->parse("{\"city\": \"Paris\"}", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"get_weather", "{\"city\": \"Paris\"}"}}));
  out = p->parse("{\"city\": \"Pa", true);  // cut by max_tokens
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content(true), "{\"city\": \"Pa");
  EXPECT_EQ(calls_of(p->parse("{\"city\": \"Pa", false)), (std::vector<Call>{{"get_weather", "{\"city\": \"Pa"}}));
}

TEST(ForcedParsers, RequiredCallsAreAListOfNamesAndParameters) {
  const auto p = required_calls_parser();
  auto out = p->parse("[{\"name\": \"f\", \"parameters\": {\"a\": [1]}}, {\"name\": \"g\", \"parameters\": {}}]", true);
  EXPECT_EQ(calls_of(out), (std::vector<Call>{{"f", "{\"a\": [1]}"}, {"g", "{}"}}));
  EXPECT_TRUE(p->parse("[{\"name\": \"f\", \"parameters\": {}}", true).calls.empty());
  EXPECT_TRUE(p->parse("[]", true).calls.empty());
  EXPECT_EQ(calls_of(p->parse("[{\"name\": \"f\", \"parameters\": {\"a\": ", false)),
            (std::vector<Call>{{"f", "{\"a\": "}}));
}

}  // namespace
}  // namespace zinfer::gateway::tools
