// UTF-8 and Unicode helpers for the text stages. The tokenizer needs the semantics of HF
// `tokenizers` (Rust's `char`: is_whitespace, is_alphanumeric, String::from_utf8_lossy, which
// decoders must reproduce byte for byte); the chat template needs Python `str` semantics (lengths,
// indices and slices count code points, str.isspace, per-code-point case mapping). Both kinds live
// here, named after the function they reproduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zinfer::utf8 {

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

// Decodes the code point at s[pos] and advances pos (pos < s.size()). A byte that does not start
// a complete sequence (a stray continuation byte, an invalid lead byte, a sequence cut off by the
// end of `s` or by a non-continuation byte) decodes as the code point of its value and advances by
// one, so that scanning never reads past `s`; valid UTF-8 decodes exactly. Inline: the tokenizer
// calls it once per character of every prompt.
inline char32_t next(std::string_view s, size_t& pos) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  const size_t len = char_len(b0);
  if (len == 1 || pos + len > s.size()) {
    ++pos;
    return b0;
  }
  char32_t cp = b0 & (0x7F >> len);
  for (size_t i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[pos + i]);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  pos += len;
  return cp;
}

// The code point of the last character of `s` (s must not be empty).
char32_t last(std::string_view s);

void append(std::string& out, char32_t cp);
std::string encode(char32_t cp);

// Byte offset of the first invalid sequence, or npos when `s` is valid UTF-8.
size_t find_invalid(std::string_view s);

// Rust's String::from_utf8_lossy: each maximal invalid subpart becomes one U+FFFD.
std::string lossy(std::string_view bytes);

size_t length(std::string_view s);  // in code points (as Python's len(str))
// Byte offset of each code point, plus s.size() at the end (size length(s) + 1).
std::vector<size_t> offsets(std::string_view s);

// Rust char::is_whitespace (Unicode White_Space).
bool is_whitespace(char32_t cp);
// Python str.isspace: White_Space plus the separators U+001C..U+001F.
bool is_space(char32_t cp);
// Rust char::is_alphanumeric (Alphabetic or Numeric general categories Nd/Nl/No).
bool is_alphanumeric(char32_t cp);
// Rust char::is_numeric (Nd, Nl, No).
bool is_numeric(char32_t cp);
// Unicode punctuation (general category P*).
bool is_punctuation(char32_t cp);
// Python str.isalpha (letters, general categories L*).
bool is_alpha(char32_t cp);
// Python str.isdigit, restricted to decimal digits (Nd).
bool is_digit(char32_t cp);

// Python str.strip/lstrip/rstrip: strips Unicode whitespace (is_space), or the code points in `chars`.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);

// Python str.upper/str.lower, and per-code-point simple case mappings (utf8proc).
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
char32_t to_upper(char32_t cp);
char32_t to_lower(char32_t cp);
char32_t to_title(char32_t cp);

}  // namespace zinfer::utf8
