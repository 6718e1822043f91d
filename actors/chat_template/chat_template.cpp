#include "actors/chat_template/chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/chat_template/interpreter.h"
#include "actors/chat_template/parser.h"

namespace zinfer::chat {

struct Program {
  ast::Body body;
};

namespace {

std::string render_program(const Program& program, Dict&& variables) {
  Interpreter interpreter(std::move(variables));
  try {
    return interpreter.render(program.body);
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& e) {  // a safety net: positioned errors are TemplateErrors already
    throw TemplateError(e.what());
  }
}

template <typename Json>
Value to_value(const Json& json) {
  try {
    return from_json(json);
  } catch (const EvalError& e) {
    throw TemplateError(e.what());
  }
}

template <typename Json>
Dict context_variables(const Json& context) {
  if (!context.is_object()) throw TemplateError("the render context must be a JSON object, got " + context.dump());
  Dict variables;
  for (const auto& [key, value] : context.items()) variables.set(key, to_value(value));
  return variables;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TemplateError("cannot read " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// A special token in tokenizer_config.json: a string, {"content": ...} (AddedToken), or null.
std::string token_text(const nlohmann::json& config, const char* key, const std::string& file) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) return (*it)["content"].get<std::string>();
  throw TemplateError(std::string("unsupported value of '") + key + "' in " + file + ": " + it->dump());
}

}  // namespace

std::string render_variables(const ChatTemplate& chat_template, Dict&& variables) {
  return render_program(*chat_template.program_, std::move(variables));
}

namespace {

template <typename Json>
std::string apply(const TokenizerChatConfig& config, const Json& messages, bool add_generation_prompt,
                  const Json& extra_context) {
  if (!messages.is_array()) throw TemplateError("messages must be a JSON array, got " + messages.dump());
  if (!extra_context.is_object()) throw TemplateError("extra context must be a JSON object, got " + extra_context.dump());
  // The variables transformers passes: messages, tools, documents, add_generation_prompt, the
  // special tokens, then the caller's kwargs (which may override any of them).
  Dict variables;
  variables.set("messages", to_value(messages));
  variables.set("tools", Value::none());
  variables.set("documents", Value::none());
  variables.set("add_generation_prompt", Value(add_generation_prompt));
  if (!config.bos_token.empty()) variables.set("bos_token", Value(config.bos_token));
  if (!config.eos_token.empty()) variables.set("eos_token", Value(config.eos_token));
  for (const auto& [key, value] : extra_context.items()) variables.set(key, to_value(value));
  if (config.compiled && config.compiled->source() == config.chat_template)
    return render_variables(*config.compiled, std::move(variables));
  return render_variables(ChatTemplate(config.chat_template), std::move(variables));
}

}  // namespace

namespace {
std::shared_ptr<const Program> parse_program(const std::string& source) {
  try {
    return std::make_shared<Program>(Program{parse_template(source)});
  } catch (const TemplateError&) {
    throw;
  } catch (const std::exception& e) {  // a safety net: the parser reports its errors as TemplateErrors
    throw TemplateError(e.what());
  }
}
}  // namespace

ChatTemplate::ChatTemplate(std::string source) : source_(std::move(source)), program_(parse_program(source_)) {}

std::string ChatTemplate::render(const nlohmann::json& context) const {
  return render_program(*program_, context_variables(context));
}
std::string ChatTemplate::render(const nlohmann::ordered_json& context) const {
  return render_program(*program_, context_variables(context));
}

TokenizerChatConfig TokenizerChatConfig::load(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  fs::path folder, config_file;
  if (fs::is_directory(p)) {
    folder = p;
    config_file = p / "tokenizer_config.json";
  } else if (p.filename() == "tokenizer_config.json") {
    folder = p.parent_path();
    config_file = p;
  } else {
    if (!fs::exists(p)) throw TemplateError("no such file or folder: " + path);
    folder = p.parent_path();
    config_file = folder / "tokenizer_config.json";
  }
  if (!fs::exists(config_file)) throw TemplateError("no tokenizer_config.json for " + path + " (looked for " + config_file.string() + ")");
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(read_file(config_file));
  } catch (const nlohmann::json::exception& e) {
    throw TemplateError("cannot parse " + config_file.string() + ": " + e.what());
  }
  if (!config.is_object()) throw TemplateError(config_file.string() + " is not a JSON object");

  TokenizerChatConfig out;
  out.bos_token = token_text(config, "bos_token", config_file.string());
  out.eos_token = token_text(config, "eos_token", config_file.string());
  const fs::path jinja_file = folder / "chat_template.jinja";
  if (fs::exists(jinja_file)) {
    out.chat_template = read_file(jinja_file);
  } else {
    const auto it = config.find("chat_template");
    if (it == config.end() || it->is_null())
      throw TemplateError(config_file.string() + " has no chat_template (and there is no chat_template.jinja)");
    if (it->is_string()) {
      out.chat_template = it->get<std::string>();
    } else if (it->is_array()) {
      for (const auto& named : *it)
        if (named.is_object() && named.value("name", "") == "default" && named.contains("template"))
          out.chat_template = named["template"].get<std::string>();
      if (out.chat_template.empty()) throw TemplateError(config_file.string() + ": chat_template list has no template named 'default'");
    } else {
      throw TemplateError(config_file.string() + ": chat_template must be a string or a list of named templates");
    }
  }
  out.compiled = std::make_shared<const ChatTemplate>(out.chat_template);
  return out;
}

std::string apply_chat_template(const TokenizerChatConfig& config, const nlohmann::json& messages,
                                bool add_generation_prompt, const nlohmann::json& extra_context) {
  return apply(config, messages, add_generation_prompt, extra_context);
}

std::string apply_chat_template(const TokenizerChatConfig& config, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const nlohmann::ordered_json& extra_context) {
  return apply(config, messages, add_generation_prompt, extra_context);
}

}  // namespace zinfer::chat
