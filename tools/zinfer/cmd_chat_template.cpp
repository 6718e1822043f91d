// `zinfer chat-template`: renders a model's chat template for a conversation, byte for byte as
// transformers' apply_chat_template(tokenize=False) would, and prints it with no added newline.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "actors/chat_template/chat_template.h"
#include "tools/zinfer/commands.h"

namespace zinfer::cli {
namespace {

struct ChatTemplateOptions {
  std::string tokenizer;
  std::string messages_file;
  bool add_generation_prompt = false;
  std::string enable_thinking;  // "", "true" or "false"
};

nlohmann::ordered_json read_messages(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read messages file " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  nlohmann::ordered_json messages;
  try {
    messages = nlohmann::ordered_json::parse(buf.str());  // ordered: tojson keeps the file's key order
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("messages file " + path + " is not valid JSON: " + e.what());
  }
  if (!messages.is_array()) throw std::runtime_error("messages file " + path + " must hold a JSON array of {role, content}");
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object() || !messages[i].contains("role"))
      throw std::runtime_error("message " + std::to_string(i) + " in " + path + " is not an object with a 'role'");
  }
  return messages;
}

void run(const ChatTemplateOptions& opt) {
  const auto config = chat::TokenizerChatConfig::load(opt.tokenizer);
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  if (opt.enable_thinking == "true") extra["enable_thinking"] = true;
  else if (opt.enable_thinking == "false") extra["enable_thinking"] = false;
  else if (!opt.enable_thinking.empty())
    throw std::runtime_error("--enable-thinking must be true or false, got '" + opt.enable_thinking + "'");
  const std::string text =
      chat::apply_chat_template(config, read_messages(opt.messages_file), opt.add_generation_prompt, extra);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void add_chat_template_command(CLI::App& app) {
  auto opt = std::make_shared<ChatTemplateOptions>();
  auto* cmd = app.add_subcommand("chat-template", "render a model's chat template for a conversation");
  cmd->add_option("--tokenizer", opt->tokenizer, "tokenizer_config.json, tokenizer.json or the model folder")->required();
  cmd->add_option("--messages", opt->messages_file, "JSON file: an array of {role, content}")->required();
  cmd->add_flag("--add-generation-prompt", opt->add_generation_prompt, "open the assistant's turn at the end");
  cmd->add_option("--enable-thinking", opt->enable_thinking, "pass enable_thinking=true|false to the template (Qwen3)");
  cmd->callback([opt] { run(*opt); });
}

}  // namespace zinfer::cli
