// Real chat templates (Llama-3 and Qwen3 from their tokenizer_config.json, Meta's Llama 3.1 template
// in tests/data/chat_template/templates/llama31, and four templates of other well-known styles in
// tests/data/chat_template/templates, llama31_style with tools) render every conversation of
// conversations.json exactly as the references do:
//   jinja2_ref/: plain Jinja2 in transformers' configuration (make_chat_refs.py --jinja2), and
//   ref/:        transformers' apply_chat_template itself (make_chat_refs.py, run where
//                transformers is installed).
#include <gtest/gtest.h>

#include <map>

#include "actors/chat_template/chat_template.h"
#include "tests/chat_template/test_data.h"

namespace zinfer::chat {
namespace {

using nlohmann::ordered_json;

std::map<std::string, ordered_json> conversations_by_name() {
  std::map<std::string, ordered_json> out;
  for (const auto& conv : testing::read_json(testing::source_path("tests/data/chat_template/conversations.json")))
    out[conv["name"].get<std::string>()] = conv;
  return out;
}

// Renders each reference row with `config` and compares; returns how many rows were checked.
size_t compare_with_reference(const TokenizerChatConfig& config, const std::filesystem::path& ref_file) {
  const auto conversations = conversations_by_name();
  size_t checked = 0;
  for (const auto& row : testing::read_jsonl(ref_file)) {
    const std::string name = row["conversation"].get<std::string>();
    SCOPED_TRACE(ref_file.filename().string() + ": " + row.dump());
    const auto it = conversations.find(name);
    if (it == conversations.end()) {
      ADD_FAILURE() << "conversation '" << name << "' is not in conversations.json";
      continue;
    }
    // The variables a request's chat_template_kwargs would add (make_chat_refs.py --template-kwargs).
    ordered_json extra = row.contains("template_kwargs") ? row["template_kwargs"] : ordered_json::object();
    if (!row["enable_thinking"].is_null()) extra["enable_thinking"] = row["enable_thinking"];
    if (it->second.contains("tools")) extra["tools"] = it->second["tools"];
    const bool add_generation_prompt = row["add_generation_prompt"].get<bool>();
    if (row.contains("text")) {
      try {
        EXPECT_EQ(apply_chat_template(config, it->second["messages"], add_generation_prompt, extra),
                  row["text"].get<std::string>());
      } catch (const TemplateError& e) {
        ADD_FAILURE() << "unexpected error: " << e.what();
      }
    } else {
      EXPECT_THROW(apply_chat_template(config, it->second["messages"], add_generation_prompt, extra), TemplateError)
          << "the reference raised " << row["error"];
    }
    ++checked;
  }
  return checked;
}

void check_jinja2_reference(const std::filesystem::path& config_dir, const std::string& name) {
  const auto ref = testing::source_path("tests/data/chat_template/jinja2_ref/" + name + ".jsonl");
  ASSERT_TRUE(std::filesystem::exists(ref))
      << "missing " << ref << ": run python3 tools/fixtures/make_chat_refs.py --jinja2 " << config_dir.string()
      << " tests/data/chat_template/jinja2_ref --name " << name;
  const auto config = TokenizerChatConfig::load(config_dir.string());
  // Every conversation, in its 6 variants (add_generation_prompt x enable_thinking).
  EXPECT_EQ(compare_with_reference(config, ref), 6 * conversations_by_name().size());
}

TEST(Jinja2Reference, Llama3) {
  ZINFER_REQUIRE_TOKENIZER("llama3");
  check_jinja2_reference(testing::tokenizer_dir("llama3"), "llama3");
}

TEST(Jinja2Reference, Qwen3) {
  ZINFER_REQUIRE_TOKENIZER("qwen3");
  check_jinja2_reference(testing::tokenizer_dir("qwen3"), "qwen3");
}

TEST(Jinja2Reference, MistralStyle) {
  check_jinja2_reference(testing::source_path("tests/data/chat_template/templates/mistral_style"), "mistral_style");
}

TEST(Jinja2Reference, ZephyrStyle) {
  check_jinja2_reference(testing::source_path("tests/data/chat_template/templates/zephyr_style"), "zephyr_style");
}

TEST(Jinja2Reference, Llama31StyleTools) {
  check_jinja2_reference(testing::source_path("tests/data/chat_template/templates/llama31_style"), "llama31_style");
}

// Meta's own template: tools in the first user message, "Environment: ipython", results as JSON
// text in ipython turns, and an error for more than one call in a message.
TEST(Jinja2Reference, Llama31) {
  check_jinja2_reference(testing::source_path("tests/data/chat_template/templates/llama31"), "llama31");
}

// Its chat_template_kwargs: tools_in_user_message false puts the tools in the system message.
TEST(Jinja2Reference, Llama31ToolsInSystemMessage) {
  check_jinja2_reference(testing::source_path("tests/data/chat_template/templates/llama31"), "llama31_tools_in_system");
}

// builtin_tools and date_string: a "Tools:" line, a call of a built-in tool as <|python_tag|>
// name.call(arg="value") (the items filter), <|eom_id|> after calls.
TEST(Jinja2Reference, Llama31BuiltinTools) {
  check_jinja2_reference(testing::source_path("tests/data/chat_template/templates/llama31"), "llama31_builtin_tools");
}

TEST(Jinja2Reference, ChatmlKitchenSink) {
  check_jinja2_reference(testing::source_path("tests/data/chat_template/templates/chatml_kitchen"), "chatml_kitchen");
}

void check_transformers_reference(const std::string& model) {
  ZINFER_REQUIRE_TOKENIZER(model);
  const auto ref = testing::source_path("tests/data/chat_template/ref/" + model + ".jsonl");
  ASSERT_TRUE(std::filesystem::exists(ref))
      << "missing " << ref << ": on a machine with transformers run\n  python3 tools/fixtures/make_chat_refs.py "
      << "tests/data/tokenizers/" << model << " OUTDIR\nand copy OUTDIR/" << model
      << ".jsonl to tests/data/chat_template/ref/";
  const auto config = TokenizerChatConfig::load(testing::tokenizer_dir(model).string());
  // The rows the file has: they are made on a machine with transformers, so conversations added
  // since (rendered by jinja2_ref/ already) wait for the next run there. The first 16
  // conversations' 96 rows must be there.
  EXPECT_GE(compare_with_reference(config, ref), 96u);
}

TEST(TransformersReference, Llama3) { check_transformers_reference("llama3"); }
TEST(TransformersReference, Qwen3) { check_transformers_reference("qwen3"); }

// Meta's Llama 3.1 template on Llama-3's tokenizer, as made with transformers by
//   make_chat_refs.py tests/data/tokenizers/llama3 tests/data/chat_template/ref
//       --config tests/data/chat_template/templates/llama31 --name NAME [--template-kwargs JSON]
// (the kwargs of each NAME are those of its jinja2_ref file). The references are made where
// transformers is installed; until one is there its test says how to make it and is skipped.
void check_llama31_transformers_reference(const std::string& name, const std::string& template_kwargs) {
  ZINFER_REQUIRE_TOKENIZER("llama3");
  const auto ref = testing::source_path("tests/data/chat_template/ref/" + name + ".jsonl");
  if (!std::filesystem::exists(ref)) {
    GTEST_SKIP() << "missing " << ref << ": on a machine with transformers run\n  python3 tools/fixtures/make_chat_refs.py "
                 << "tests/data/tokenizers/llama3 tests/data/chat_template/ref --config "
                 << "tests/data/chat_template/templates/llama31 --name " << name
                 << (template_kwargs.empty() ? "" : " --template-kwargs '" + template_kwargs + "'");
  }
  const auto config = TokenizerChatConfig::load(testing::source_path("tests/data/chat_template/templates/llama31").string());
  EXPECT_EQ(compare_with_reference(config, ref), 6 * conversations_by_name().size());
}

TEST(TransformersReference, Llama31) { check_llama31_transformers_reference("llama31", ""); }
TEST(TransformersReference, Llama31ToolsInSystemMessage) {
  check_llama31_transformers_reference("llama31_tools_in_system", R"({"tools_in_user_message": false})");
}
TEST(TransformersReference, Llama31BuiltinTools) {
  check_llama31_transformers_reference("llama31_builtin_tools",
                                       R"({"builtin_tools": ["brave_search", "wolfram_alpha"], "date_string": "01 Nov 2026"})");
}

}  // namespace
}  // namespace zinfer::chat
