// GPT-2's byte-to-unicode map: every byte becomes a printable character so that byte-level BPE
// vocabularies hold no control characters or spaces. Printable Latin-1 bytes (! to ~, ¡ to ¬,
// ® to ÿ) map to themselves; the other 68 bytes, in order, to U+0100, U+0101, ...
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace zinfer::tok {

struct ByteLevelMap {
  std::array<std::string, 256> byte_to_utf8;  // each byte's character, UTF-8 encoded
  std::array<char[2], 256> utf8_bytes;        // the same as 1 or 2 raw bytes, for fast appends
  std::array<uint8_t, 256> utf8_len;
  std::array<int16_t, 512> char_to_byte;      // code point (< 512) -> byte, -1 when none
  static const ByteLevelMap& get();
};

}  // namespace zinfer::tok
