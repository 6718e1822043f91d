#include "actors/detokenizer/token_texts.h"

#include <optional>

#include "actors/text/utf8.h"
#include "actors/tokenizer/byte_level.h"

namespace zinfer::actors {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The bytes a vocabulary string stands for, when it is a byte token ("<0xNN>") or a byte-level
// token; nothing otherwise.
std::optional<std::string> vocabulary_bytes(const std::string& piece) {
  if (piece.size() == 6 && piece.starts_with("<0x") && piece.back() == '>') {
    const int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
    if (hi >= 0 && lo >= 0) return std::string(1, static_cast<char>(hi * 16 + lo));
  }
  const auto& map = tok::ByteLevelMap::get();
  std::string out;
  size_t i = 0;
  while (i < piece.size()) {
    const auto c = static_cast<unsigned char>(piece[i]);
    uint32_t cp = 0;
    size_t len = 1;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < piece.size()) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(piece[i + 1]) & 0x3Fu);
      len = 2;
    } else {
      return std::nullopt;  // beyond U+07FF: not a byte-level character
    }
    if (cp >= map.char_to_byte.size() || map.char_to_byte[cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(map.char_to_byte[cp]));
    i += len;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::string token_text(const tok::Tokenizer& tokenizer, int32_t id) {
  const int32_t one[1] = {id};
  std::string text = tokenizer.decode(std::span<const int32_t>(one, 1), /*skip_special_tokens=*/false);
  if (text.find(kReplacement) == std::string::npos) return text;
  if (auto bytes = vocabulary_bytes(tokenizer.id_to_token(id))) {
    // Only a token that is not a whole character by itself: one that spells U+FFFD keeps it.
    if (utf8::find_invalid(*bytes) != std::string::npos) return *bytes;
  }
  return text;
}

void add_token_texts(const tok::Tokenizer& tokenizer, protocol::TextDelta& d) {
  auto add = [&](int32_t id) {
    if (id >= 0 && !d.token_texts.count(id)) d.token_texts.emplace(id, token_text(tokenizer, id));
  };
  for (int32_t id : d.token_ids) add(id);
  for (const auto& alternatives : d.top_logprobs) {
    for (const auto& t : alternatives) add(t.token);
  }
  if (d.prompt_logprobs) {
    for (int32_t id : d.prompt_token_ids) add(id);
    for (const auto& alternatives : d.prompt_logprobs->top_logprobs) {
      for (const auto& t : alternatives) add(t.token);
    }
  }
}

}  // namespace zinfer::actors
