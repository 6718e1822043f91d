// What the tokenizer stage does to one request, without sockets: chat template for chat
// requests, encoding with the model's tokenizer.json, and the checks that need the token count
// (context length, token ids in the vocabulary). The result is a TokenizedRequest for the
// scheduler or an ErrorReply (400) for the client.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "actors/chat_template/chat_template.h"
#include "actors/tokenizer/tokenizer.h"
#include "protocol/messages.h"

namespace zinfer::actors {

struct TokenizerResources {
  std::shared_ptr<const tok::Tokenizer> tokenizer;        // null: only prompt_ids requests work
  std::optional<chat::TokenizerChatConfig> chat;          // null: chat requests are refused
  int32_t max_model_len = 0;
  int32_t vocab_size = 0;

  // Reads tokenizer.json / tokenizer_config.json / config.json of a model folder; what is
  // missing is left empty (and requests that need it get a clear error).
  // `chat_template`: "" = the model's, else a file holding the template or the template itself
  // ([tokenizer] chat_template); a template that does not parse is a chat::TemplateError.
  static TokenizerResources load(const std::string& model_dir, int32_t max_model_len_override,
                                 const std::string& chat_template = "");

  // Replaces the chat template: a file holding one, or the template itself (vLLM's
  // --chat-template). Throws chat::TemplateError when it does not parse.
  void use_chat_template(const std::string& template_or_file);
};

// The messages as the chat template sees them, in transformers' shape: {role, content}, plus
// tool_calls [{id, type: "function", function: {name, arguments}}] on an assistant's message (the
// arguments as a JSON object, as vLLM gives them to templates: Llama 3.1's writes them with
// tojson), tool_call_id on a tool's, and name where set. Empty fields are left out. Throws
// std::runtime_error when a call's arguments are not JSON.
nlohmann::ordered_json chat_template_messages(const std::vector<protocol::ChatMessage>& messages);

// The prompt ids of chat messages: the chat template, then the encoding (special tokens added only
// when asked: the template writes them). Throws std::runtime_error when the model lacks a
// tokenizer or a chat template, or the messages are empty.
// `extras` are a request's own chat settings (GenerateRequest's continue_final_message,
// chat_template, chat_template_kwargs, tools), applied as vLLM applies them.
struct ChatExtras {
  bool continue_final_message = false;
  std::string chat_template;         // "" = the server's
  std::string chat_template_kwargs;  // a JSON object's text; "" = none
  std::string tools;                 // the request's tools (a JSON array's text), the template's `tools`; "" = none
};
std::vector<int32_t> encode_chat(const TokenizerResources& resources, const std::vector<protocol::ChatMessage>& messages,
                                 bool add_generation_prompt, bool enable_thinking, bool add_special_tokens,
                                 const ChatExtras& extras = {});

// /tokenize and /detokenize: a TokenizeReply, or an ErrorReply (400) naming the problem.
std::variant<protocol::TokenizeReply, protocol::ErrorReply> answer_tokenize(const TokenizerResources& resources,
                                                                              const protocol::TokenizeRequest& request);

std::variant<protocol::TokenizedRequest, protocol::ErrorReply> tokenize_request(
    const TokenizerResources& resources, const protocol::GenerateRequest& request);

}  // namespace zinfer::actors
