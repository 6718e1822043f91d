// The tool conversations of tests/data/chat_template/conversations.json, sent the way an OpenAI
// client sends them (protocol ChatMessages: arguments as JSON text, tools as the request's JSON
// text), reach the chat template in transformers' shape: the prompt ids equal the encoding of the
// reference render (jinja2_ref/, which matches transformers' apply_chat_template(tools=...)).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "actors/pipeline/tokenize_request.h"

namespace zinfer::actors {
namespace {

using nlohmann::ordered_json;

std::string source(const std::string& relative) { return std::string(ZINFER_SOURCE_DIR) + "/" + relative; }

ordered_json read_json(const std::string& path) {
  std::ifstream in(path);
  return ordered_json::parse(in);
}

// The messages as the gateway makes them from an OpenAI request.
std::vector<protocol::ChatMessage> wire_messages(const ordered_json& messages) {
  std::vector<protocol::ChatMessage> out;
  for (const auto& m : messages) {
    protocol::ChatMessage cm;
    cm.role = m["role"];
    cm.content = m["content"].is_string() ? m["content"].get<std::string>() : "";
    if (m.contains("tool_call_id")) cm.tool_call_id = m["tool_call_id"];
    if (m.contains("name")) cm.name = m["name"];
    if (m.contains("tool_calls")) {
      for (const auto& c : m["tool_calls"]) {
        // OpenAI's clients carry the arguments as JSON text (json.dumps: ", " and ": ").
        cm.tool_calls.push_back({c.value("id", ""), c["function"]["name"], c["function"]["arguments"].dump()});
      }
    }
    out.push_back(std::move(cm));
  }
  return out;
}

// `model`'s tokenizer with the chat template of `template_dir` (default: the model's own), against
// the references named `reference`.
void check_model(const std::string& model, const std::string& template_dir = "", std::string reference = "") {
  const std::string dir = source("tests/data/tokenizers/" + model);
  ASSERT_TRUE(std::filesystem::exists(dir + "/tokenizer.json")) << "run tools/fetch-tokenizers.sh";
  TokenizerResources res;
  res.tokenizer = tok::Tokenizer::from_file(dir + "/tokenizer.json");
  res.chat = chat::TokenizerChatConfig::load(template_dir.empty() ? dir : source(template_dir));
  if (reference.empty()) reference = model;

  std::map<std::string, ordered_json> conversations;
  for (const auto& c : read_json(source("tests/data/chat_template/conversations.json"))) conversations[c["name"]] = c;
  std::ifstream ref(source("tests/data/chat_template/jinja2_ref/" + reference + ".jsonl"));
  std::string line;
  size_t checked = 0;
  while (std::getline(ref, line)) {
    const ordered_json row = ordered_json::parse(line);
    const ordered_json& conv = conversations.at(row["conversation"]);
    if (!conv.contains("tools") || row.contains("error") || row["enable_thinking"] == false) continue;
    SCOPED_TRACE(model + ": " + row["conversation"].get<std::string>() + " add_generation_prompt " +
                 row["add_generation_prompt"].dump());
    const auto ids = encode_chat(res, wire_messages(conv["messages"]), row["add_generation_prompt"].get<bool>(),
                                 /*enable_thinking=*/true, /*add_special_tokens=*/false,
                                 ChatExtras{.tools = conv["tools"].dump()});
    EXPECT_EQ(ids, res.tokenizer->encode(row["text"].get<std::string>(), false));
    ++checked;
  }
  EXPECT_GE(checked, 10u);
}

TEST(ToolTemplate, Qwen3RendersToolHistoriesAsTransformersDoes) { check_model("qwen3"); }
TEST(ToolTemplate, Llama3RendersToolHistoriesAsTransformersDoes) { check_model("llama3"); }
TEST(ToolTemplate, Llama31StyleRendersToolsAndCallsAsJinja2Does) {
  check_model("llama3", "tests/data/chat_template/templates/llama31_style", "llama31_style");
}
// Meta's own Llama 3.1 template tests `'tool_calls' in message` and renders the arguments with
// tojson: a message without calls must have no tool_calls key, the arguments must arrive as objects.
TEST(ToolTemplate, MetaLlama31RendersToolsAndCallsAsJinja2Does) {
  check_model("llama3", "tests/data/chat_template/templates/llama31", "llama31");
}

TEST(ToolTemplate, CallsReachTheTemplateInTransformersShape) {
  protocol::ChatMessage assistant;
  assistant.role = "assistant";
  assistant.tool_calls = {{"call_1", "f", R"({"b": 1, "a": [true, null]})"}, {"", "g", ""}};
  protocol::ChatMessage tool;
  tool.role = "tool";
  tool.content = "ok";
  tool.tool_call_id = "call_1";
  tool.name = "f";
  const ordered_json got = chat_template_messages({assistant, tool});
  const ordered_json want = ordered_json::parse(R"([
      {"role": "assistant", "content": "", "tool_calls": [
         {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": {"b": 1, "a": [true, null]}}},
         {"type": "function", "function": {"name": "g", "arguments": {}}}]},
      {"role": "tool", "content": "ok", "tool_call_id": "call_1", "name": "f"}])");
  EXPECT_EQ(got.dump(), want.dump());  // key order included
  assistant.tool_calls = {{"x", "f", "{oops"}};
  EXPECT_THROW(chat_template_messages({assistant}), std::runtime_error);
}

}  // namespace
}  // namespace zinfer::actors
