#include "actors/tokenizer/utf8.h"

#include <utf8proc.h>

namespace zinfer::tok::utf8 {

char32_t next(std::string_view s, size_t& pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + pos;
  const unsigned char b0 = p[0];
  if (b0 < 0x80) {
    pos += 1;
    return b0;
  }
  if ((b0 & 0xE0) == 0xC0) {
    pos += 2;
    return (char32_t(b0 & 0x1F) << 6) | (p[1] & 0x3F);
  }
  if ((b0 & 0xF0) == 0xE0) {
    pos += 3;
    return (char32_t(b0 & 0x0F) << 12) | (char32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
  }
  pos += 4;
  return (char32_t(b0 & 0x07) << 18) | (char32_t(p[1] & 0x3F) << 12) | (char32_t(p[2] & 0x3F) << 6) |
         (p[3] & 0x3F);
}

char32_t last(std::string_view s) {
  size_t start = s.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  return next(s, start);
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode(char32_t cp) {
  std::string s;
  append(s, cp);
  return s;
}

namespace {

// Length of the valid sequence starting at p (<= n bytes available), or, when invalid, minus the
// length of its maximal subpart (the lead byte plus the continuation bytes that were still
// acceptable before the sequence broke off), as the Unicode standard's "substitution of maximal
// subparts" practice, which Rust follows, defines it.
long sequence_at(const unsigned char* p, size_t n) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) return 1;
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (size_t i = 1; i < need; ++i) {
    if (i >= n) return -static_cast<long>(i);
    const unsigned char lo_i = i == 1 ? lo : 0x80, hi_i = i == 1 ? hi : 0xBF;
    if (p[i] < lo_i || p[i] > hi_i) return -static_cast<long>(i);
  }
  return static_cast<long>(need);
}

}  // namespace

size_t find_invalid(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const long len = sequence_at(p + i, s.size() - i);
    if (len < 0) return i;
    i += static_cast<size_t>(len);
  }
  return std::string_view::npos;
}

std::string lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  while (i < bytes.size()) {
    if (p[i] < 0x80) {
      out.push_back(static_cast<char>(p[i++]));
      continue;
    }
    const long len = sequence_at(p + i, bytes.size() - i);
    if (len > 0) {
      out.append(bytes.data() + i, static_cast<size_t>(len));
      i += static_cast<size_t>(len);
    } else {
      append(out, kReplacement);
      i += static_cast<size_t>(-len);
    }
  }
  return out;
}

bool is_whitespace(char32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_numeric(char32_t cp) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

bool is_alphanumeric(char32_t cp) {
  // Rust's Alphabetic also holds the Other_Alphabetic marks, which utf8proc does not expose;
  // letters and numbers are what the added-token word-boundary check needs.
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) || is_numeric(cp);
}

bool is_punctuation(char32_t cp) {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

}  // namespace zinfer::tok::utf8
