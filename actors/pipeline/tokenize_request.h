// What the tokenizer stage does to one request, without sockets: chat template for chat
// requests, encoding with the model's tokenizer.json, and the checks that need the token count
// (context length, token ids in the vocabulary). The result is a TokenizedRequest for the
// scheduler or an ErrorReply (400) for the client.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>

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
  static TokenizerResources load(const std::string& model_dir, int32_t max_model_len_override);
};

std::variant<protocol::TokenizedRequest, protocol::ErrorReply> tokenize_request(
    const TokenizerResources& resources, const protocol::GenerateRequest& request);

}  // namespace zinfer::actors
