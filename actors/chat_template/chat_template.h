// Chat templates: renders the Jinja `chat_template` of a Hugging Face tokenizer_config.json the
// way transformers' apply_chat_template does (Jinja2 with trim_blocks and lstrip_blocks,
// raise_exception, strftime_now, tojson as json.dumps(ensure_ascii=False)). The interpreter
// supports the Jinja subset chat templates use; anything else is a TemplateError naming the
// construct and its line:column.
//
//   auto config = TokenizerChatConfig::load("models/qwen3");
//   std::string prompt = apply_chat_template(config, messages, /*add_generation_prompt=*/true,
//                                            {{"enable_thinking", false}});
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "actors/chat_template/template_error.h"

namespace zinfer::chat {

struct Program;  // the parsed template (interpreter internals)
struct Dict;     // template variables (value.h)

class ChatTemplate {
 public:
  explicit ChatTemplate(std::string source);  // parses; throws TemplateError

  // `context` is a JSON object: its keys become the template's variables. Thread-safe: each
  // render has its own state. Throws TemplateError (raise_exception, undefined method, ...).
  std::string render(const nlohmann::json& context) const;
  std::string render(const nlohmann::ordered_json& context) const;  // keeps the caller's key order

  const std::string& source() const { return source_; }

 private:
  // apply_chat_template builds the variables directly, without a JSON copy of the messages.
  friend std::string render_variables(const ChatTemplate& chat_template, Dict&& variables);

  std::string source_;
  std::shared_ptr<const Program> program_;
};

struct TokenizerChatConfig {
  std::string chat_template, bos_token, eos_token;  // a token absent or null in the file is ""
  std::shared_ptr<const ChatTemplate> compiled;     // chat_template, parsed once by load()

  // PATH: tokenizer_config.json, tokenizer.json (then its folder's tokenizer_config.json) or a
  // folder. A chat_template.jinja beside it wins over the config's field, as in transformers;
  // a list of named templates yields the one named "default". Throws TemplateError when there
  // is no template or the file cannot be read or parsed.
  static TokenizerChatConfig load(const std::string& path);
};

// Renders `messages` (a JSON array of {role, content, ...}) with the context transformers builds:
// messages, add_generation_prompt, bos_token/eos_token (only when set), tools=None,
// documents=None, then every key of `extra_context` (e.g. enable_thinking, tools).
std::string apply_chat_template(const TokenizerChatConfig& config, const nlohmann::json& messages,
                                bool add_generation_prompt,
                                const nlohmann::json& extra_context = nlohmann::json::object());
std::string apply_chat_template(const TokenizerChatConfig& config, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const nlohmann::ordered_json& extra_context);

}  // namespace zinfer::chat
