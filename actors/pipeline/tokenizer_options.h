// The tokenizer actor's own setting, [tokenizer] (settings/setting.h).
#pragma once

#include <cstdint>

#include "settings/setting.h"

namespace zinfer::actors {

struct TokenizerOptions {
  int32_t workers = 2;  // threads that tokenize (the actor's own thread only hands out requests)
};

inline const settings::Settings<TokenizerOptions>& tokenizer_settings() {
  static const settings::Settings<TokenizerOptions> s = {
      settings::integer<TokenizerOptions>("tokenizer", "workers", &TokenizerOptions::workers, 1, 64,
                                          "tokenizer worker threads"),
  };
  return s;
}

}  // namespace zinfer::actors
