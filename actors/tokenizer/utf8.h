// UTF-8 helpers shared by the tokenizer stages: decoding one code point, encoding one, the
// character classes HF `tokenizers` takes from Rust's `char` (whitespace, alphanumeric), and the
// lossy conversion that Rust's String::from_utf8_lossy performs (one U+FFFD per maximal invalid
// subpart), which decoders must reproduce byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zinfer::tok::utf8 {

inline constexpr char32_t kReplacement = 0xFFFD;

// Length in bytes of the character whose lead byte is `lead` (1 for invalid lead bytes, so that
// scanning always advances).
inline size_t char_len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Decodes the character at s[pos] of a string already known to be valid UTF-8; advances pos.
char32_t next(std::string_view s, size_t& pos);

// The code point of the last character of valid UTF-8 `s` (s must not be empty).
char32_t last(std::string_view s);

void append(std::string& out, char32_t cp);
std::string encode(char32_t cp);

// Byte offset of the first invalid sequence, or npos when `s` is valid UTF-8.
size_t find_invalid(std::string_view s);

// Rust's String::from_utf8_lossy: each maximal invalid subpart becomes one U+FFFD.
std::string lossy(std::string_view bytes);

// Rust char::is_whitespace (Unicode White_Space).
bool is_whitespace(char32_t cp);
// Rust char::is_alphanumeric (Alphabetic or Numeric general categories Nd/Nl/No).
bool is_alphanumeric(char32_t cp);
// Rust char::is_numeric (Nd, Nl, No).
bool is_numeric(char32_t cp);
// Unicode punctuation (general category P*).
bool is_punctuation(char32_t cp);

}  // namespace zinfer::tok::utf8
