// A tokenizer small enough to check by hand: id 0 is a special token, ids 1..26 are the letters
// a..z and id 27 is any other character (decoded as a space). Encoding is one token per byte, so
// decode(encode(text)) keeps the token count.
#pragma once

#include "tools/bench/lib/datasets.h"

namespace zinfer::bench::testing {

class LetterCodec : public TokenCodec {
 public:
  int32_t vocab_size() const override { return 28; }
  bool is_special(int32_t id) const override { return id == 0; }
  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    for (char c : text) ids.push_back(c >= 'a' && c <= 'z' ? c - 'a' + 1 : 27);
    return ids;
  }
  std::string decode(std::span<const int32_t> ids) const override {
    std::string s;
    for (int32_t id : ids) {
      if (id >= 1 && id <= 26) s.push_back(static_cast<char>('a' + id - 1));
      else if (id == 27) s.push_back(' ');
    }
    return s;
  }
};

}  // namespace zinfer::bench::testing
