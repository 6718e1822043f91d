// Classes of Unicode code points as byte-level grammar: a set of code point ranges becomes the
// alternation of UTF-8 byte-range sequences that encodes exactly those code points (surrogates,
// which UTF-8 cannot carry, are never included). Regex and GBNF character classes and the JSON
// string grammar are built from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "actors/grammar/grammar.h"

namespace zinfer::grammar {

struct CodepointRange {
  uint32_t lo, hi;  // inclusive
};

inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;

// Sorted, merged, surrogate-free; `negated` takes the complement within [0, U+10FFFF].
std::vector<CodepointRange> normalize_ranges(std::vector<CodepointRange> ranges, bool negated);
Expr utf8_class(std::vector<CodepointRange> ranges, bool negated = false);

std::string utf8_encode(uint32_t cp);
// Decodes one code point at text[pos] and advances pos; false on malformed UTF-8.
bool utf8_decode(std::string_view text, size_t& pos, uint32_t& cp);

}  // namespace zinfer::grammar
