#include "actors/grammar/utf8_class.h"

#include <algorithm>

namespace zinfer::grammar {

std::vector<CodepointRange> normalize_ranges(std::vector<CodepointRange> ranges, bool negated) {
  std::vector<CodepointRange> clipped;
  for (CodepointRange r : ranges) {
    if (r.lo > r.hi || r.lo > kMaxCodepoint) continue;
    r.hi = std::min(r.hi, kMaxCodepoint);
    clipped.push_back(r);
  }
  std::sort(clipped.begin(), clipped.end(), [](auto a, auto b) { return a.lo < b.lo; });
  std::vector<CodepointRange> merged;
  for (CodepointRange r : clipped) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) merged.back().hi = std::max(merged.back().hi, r.hi);
    else merged.push_back(r);
  }
  if (negated) {
    std::vector<CodepointRange> complement;
    uint32_t next = 0;
    for (CodepointRange r : merged) {
      if (r.lo > next) complement.push_back({next, r.lo - 1});
      next = r.hi + 1;
    }
    if (next <= kMaxCodepoint) complement.push_back({next, kMaxCodepoint});
    merged = std::move(complement);
  }
  std::vector<CodepointRange> out;  // without U+D800..U+DFFF
  for (CodepointRange r : merged) {
    if (r.hi < 0xD800 || r.lo > 0xDFFF) {
      out.push_back(r);
      continue;
    }
    if (r.lo < 0xD800) out.push_back({r.lo, 0xD7FF});
    if (r.hi > 0xDFFF) out.push_back({0xE000, r.hi});
  }
  return out;
}

std::string utf8_encode(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

bool utf8_decode(std::string_view text, size_t& pos, uint32_t& cp) {
  if (pos >= text.size()) return false;
  const auto b0 = static_cast<uint8_t>(text[pos]);
  size_t len;
  uint32_t min;
  if (b0 < 0x80) {
    cp = b0;
    ++pos;
    return true;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return false;
  }
  if (pos + len > text.size()) return false;
  for (size_t i = 1; i < len; ++i) {
    const auto b = static_cast<uint8_t>(text[pos + i]);
    if ((b & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > kMaxCodepoint || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  pos += len;
  return true;
}

namespace {

size_t encoded_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

// [lo, hi] of one encoded length becomes byte-range sequences: split until, at every byte
// position, all combinations of the per-byte ranges are in the range.
void split_same_length(uint32_t lo, uint32_t hi, std::vector<Expr>& out) {
  const size_t n = encoded_length(lo);
  for (size_t i = 1; i < n; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;  // the bits of the i trailing bytes
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_same_length(lo, lo | m, out);
        split_same_length((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_same_length(lo, (hi & ~m) - 1, out);
        split_same_length(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::string a = utf8_encode(lo), b = utf8_encode(hi);
  std::vector<Expr> seq;
  for (size_t k = 0; k < n; ++k) seq.push_back(Expr::byte_range(static_cast<uint8_t>(a[k]), static_cast<uint8_t>(b[k])));
  out.push_back(Expr::seq(std::move(seq)));
}

}  // namespace

Expr utf8_class(std::vector<CodepointRange> ranges, bool negated) {
  std::vector<Expr> alts;
  ByteSet ascii;
  for (CodepointRange r : normalize_ranges(std::move(ranges), negated)) {
    static constexpr uint32_t kBounds[] = {0x7F, 0x7FF, 0xFFFF, kMaxCodepoint};
    uint32_t lo = r.lo;
    for (uint32_t bound : kBounds) {
      if (lo > r.hi) break;
      if (lo > bound) continue;
      const uint32_t hi = std::min(r.hi, bound);
      if (hi < 0x80) {
        for (uint32_t c = lo; c <= hi; ++c) ascii.set(c);
      } else {
        split_same_length(lo, hi, alts);
      }
      lo = hi + 1;
    }
  }
  // One byte set for all of ASCII keeps the common classes a single element.
  if (ascii.any()) alts.insert(alts.begin(), Expr::byte_set(ascii));
  if (alts.empty()) return Expr::byte_set(ByteSet{});  // matches nothing
  return Expr::alt(std::move(alts));
}

}  // namespace zinfer::grammar
