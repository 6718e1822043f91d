#include "actors/tokenizer/byte_level.h"

#include "actors/text/utf8.h"

namespace zinfer::tok {

namespace {

ByteLevelMap build() {
  ByteLevelMap m{};
  m.char_to_byte.fill(-1);
  int next_extra = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    const int cp = printable ? b : next_extra++;
    m.byte_to_utf8[b] = utf8::encode(static_cast<char32_t>(cp));
    m.utf8_len[b] = static_cast<uint8_t>(m.byte_to_utf8[b].size());
    for (size_t i = 0; i < m.byte_to_utf8[b].size(); ++i) m.utf8_bytes[b][i] = m.byte_to_utf8[b][i];
    m.char_to_byte[cp] = static_cast<int16_t>(b);
  }
  return m;
}

}  // namespace

const ByteLevelMap& ByteLevelMap::get() {
  static const ByteLevelMap map = build();
  return map;
}

}  // namespace zinfer::tok
