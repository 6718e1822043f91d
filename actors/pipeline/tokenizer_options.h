// The tokenizer actor's own settings, [tokenizer] (settings/setting.h).
#pragma once

#include <cstdint>
#include <string>

#include "settings/setting.h"

namespace zinfer::actors {

struct TokenizerOptions {
  int32_t workers = 2;  // threads that tokenize (the actor's own thread only hands out requests)
  // The chat template instead of the model's: a file holding it, or the template itself (vLLM's
  // --chat-template); "" = the model's (chat_template.jinja or tokenizer_config.json).
  std::string chat_template;
};

inline const settings::Settings<TokenizerOptions>& tokenizer_settings() {
  static const settings::Settings<TokenizerOptions> s = {
      settings::integer<TokenizerOptions>("tokenizer", "workers", &TokenizerOptions::workers, 1, 64,
                                          "tokenizer worker threads"),
      settings::text<TokenizerOptions>("tokenizer", "chat_template", &TokenizerOptions::chat_template, {},
                                       "the chat template instead of the model's: a file, or the template "
                                       "itself; \"\" = the model's"),
  };
  return s;
}

}  // namespace zinfer::actors
