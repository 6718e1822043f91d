#include "actors/grammar/regex.h"

#include <cstdio>
#include <string>
#include <vector>

#include "actors/grammar/errors.h"
#include "actors/grammar/utf8_class.h"

namespace zinfer::grammar {

Expr target_class(std::vector<CodepointRange> ranges, bool negated, RegexTarget target) {
  if (target == RegexTarget::kBytes) return utf8_class(std::move(ranges), negated);
  const std::vector<CodepointRange> set = normalize_ranges(std::move(ranges), negated);
  auto contains = [&](uint32_t cp) {
    for (const auto& r : set)
      if (cp >= r.lo && cp <= r.hi) return true;
    return false;
  };
  // Characters a JSON string holds as they are (not '"', '\\' or a control character); the
  // rest are written as their escape, one canonical form each.
  std::vector<Expr> alts;
  std::vector<CodepointRange> safe;
  for (const auto& r : set) {
    uint32_t lo = std::max<uint32_t>(r.lo, 0x20);
    if (lo > r.hi) continue;
    for (uint32_t excluded : {uint32_t{'"'}, uint32_t{'\\'}}) {
      if (excluded >= lo && excluded <= r.hi) {
        if (excluded > lo) safe.push_back({lo, excluded - 1});
        lo = excluded + 1;
      }
    }
    if (lo <= r.hi) safe.push_back({lo, r.hi});
  }
  if (!safe.empty()) alts.push_back(utf8_class(safe, false));
  if (contains('"')) alts.push_back(Expr::literal("\\\""));
  if (contains('\\')) alts.push_back(Expr::literal("\\\\"));
  for (uint32_t c = 0; c < 0x20; ++c) {
    if (!contains(c)) continue;
    switch (c) {
      case '\n': alts.push_back(Expr::literal("\\n")); break;
      case '\r': alts.push_back(Expr::literal("\\r")); break;
      case '\t': alts.push_back(Expr::literal("\\t")); break;
      case '\b': alts.push_back(Expr::literal("\\b")); break;
      case '\f': alts.push_back(Expr::literal("\\f")); break;
      default: {
        char buf[8];
        snprintf(buf, sizeof buf, "\\u%04x", c);
        alts.push_back(Expr::literal(buf));
      }
    }
  }
  if (alts.empty()) return Expr::byte_set(ByteSet{});
  return Expr::alt(std::move(alts));
}

namespace {

const std::vector<CodepointRange> kDigit = {{'0', '9'}};
const std::vector<CodepointRange> kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const std::vector<CodepointRange> kSpace = {{'\t', '\r'}, {' ', ' '},       {0xA0, 0xA0},     {0x1680, 0x1680},
                                            {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
                                            {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const std::vector<CodepointRange> kDotExcluded = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};

class RegexParser {
 public:
  RegexParser(std::string_view pattern, RegexTarget target) : p_(pattern), target_(target) {}

  RegexExpr parse() {
    RegexExpr out;
    if (!p_.empty() && p_[0] == '^') {
      out.anchored_start = true;
      ++i_;
    }
    std::string_view body = p_;
    if (body.size() > i_ && body.back() == '$' && !escaped_at(body.size() - 1)) {
      out.anchored_end = true;
      end_ = body.size() - 1;
    } else {
      end_ = body.size();
    }
    out.expr = alternation();
    if (i_ < end_) {
      if (p_[i_] == ')') fail("unbalanced ')'");
      fail("unexpected character");
    }
    return out;
  }

 private:
  // Whether p_[at] is escaped by an odd run of backslashes before it.
  bool escaped_at(size_t at) const {
    size_t n = 0;
    while (at > n && p_[at - 1 - n] == '\\') ++n;
    return n % 2 == 1;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw GrammarError("regex", "regex " + std::string(p_) + ": " + what + " at offset " + std::to_string(i_));
  }
  [[noreturn]] void unsupported(const std::string& construct) const {
    throw UnsupportedError(construct, "regex " + std::string(p_) + ": " + construct + " is not supported (offset " +
                                          std::to_string(i_) + ")");
  }
  bool at_end() const { return i_ >= end_; }
  char peek() const { return p_[i_]; }

  Expr cls(std::vector<CodepointRange> ranges, bool negated = false) {
    return target_class(std::move(ranges), negated, target_);
  }

  Expr alternation() {
    std::vector<Expr> alts{concatenation()};
    while (!at_end() && peek() == '|') {
      ++i_;
      alts.push_back(concatenation());
    }
    return Expr::alt(std::move(alts));
  }

  Expr concatenation() {
    std::vector<Expr> items;
    while (!at_end() && peek() != '|' && peek() != ')') {
      Expr a = atom();
      quantifiers(a);
      items.push_back(std::move(a));
    }
    return Expr::seq(std::move(items));
  }

  bool parse_number(uint32_t& v) {
    size_t start = i_;
    uint64_t n = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      n = n * 10 + static_cast<uint64_t>(peek() - '0');
      if (n > 100000) fail("repetition count too large");
      ++i_;
    }
    v = static_cast<uint32_t>(n);
    return i_ > start;
  }

  // One quantifier per atom: a second one (a** or a{2}{3}) is an error, as in ECMAScript.
  void quantifiers(Expr& a) {
    bool applied = false;
    while (!at_end()) {
      const char c = peek();
      uint32_t min, max;
      if (c == '*') min = 0, max = kUnbounded, ++i_;
      else if (c == '+') min = 1, max = kUnbounded, ++i_;
      else if (c == '?') min = 0, max = 1, ++i_;
      else if (c == '{') {
        const size_t save = i_;
        ++i_;
        if (!parse_number(min)) {
          i_ = save;  // not a quantifier: a literal '{' (as ECMAScript's Annex B reads it)
          return;
        }
        max = min;
        if (!at_end() && peek() == ',') {
          ++i_;
          if (!parse_number(max)) max = kUnbounded;
        }
        if (at_end() || peek() != '}') {
          i_ = save;
          return;
        }
        ++i_;
        if (max != kUnbounded && max < min) fail("numbers out of order in {} quantifier");
      } else {
        return;
      }
      if (applied) fail("nothing to repeat");
      if (!at_end() && peek() == '?') ++i_;  // lazy: same language
      a = Expr::repeat(std::move(a), min, max);
      applied = true;
    }
  }

  uint32_t next_codepoint() {
    uint32_t cp;
    size_t pos = i_;
    if (!utf8_decode(p_, pos, cp)) fail("invalid UTF-8");
    i_ = pos;
    return cp;
  }

  uint32_t hex(size_t digits) {
    uint32_t v = 0;
    for (size_t k = 0; k < digits; ++k) {
      if (at_end() || !isxdigit(static_cast<unsigned char>(peek()))) fail("bad hexadecimal escape");
      v = v * 16 + static_cast<uint32_t>(std::stoi(std::string(1, peek()), nullptr, 16));
      ++i_;
    }
    return v;
  }

  // After a backslash: a class of code points (in_class: inside [...], where \b is backspace).
  std::vector<CodepointRange> escape(bool in_class, bool& negated) {
    negated = false;
    if (at_end()) fail("trailing backslash");
    const char c = peek();
    ++i_;
    switch (c) {
      case 'd': return kDigit;
      case 'D': negated = true; return kDigit;
      case 'w': return kWord;
      case 'W': negated = true; return kWord;
      case 's': return kSpace;
      case 'S': negated = true; return kSpace;
      case 'n': return {{'\n', '\n'}};
      case 'r': return {{'\r', '\r'}};
      case 't': return {{'\t', '\t'}};
      case 'f': return {{'\f', '\f'}};
      case 'v': return {{'\v', '\v'}};
      case '0': return {{0, 0}};
      case 'x': {
        const uint32_t v = hex(2);
        return {{v, v}};
      }
      case 'u': {
        uint32_t v;
        if (!at_end() && peek() == '{') {
          ++i_;
          v = 0;
          size_t n = 0;
          while (!at_end() && peek() != '}') {
            v = v * 16 + hex(1);
            if (++n > 6) fail("bad \\u{...} escape");
          }
          if (at_end() || n == 0) fail("bad \\u{...} escape");
          ++i_;
        } else {
          v = hex(4);
        }
        return {{v, v}};
      }
      case 'b':
        if (in_class) return {{'\b', '\b'}};
        unsupported("word boundary \\b");
      case 'B': unsupported("word boundary \\B");
      case 'p':
      case 'P': unsupported("Unicode property escape \\" + std::string(1, c));
      case 'c': unsupported("control escape \\c");
      case 'k': unsupported("named backreference \\k");
      default:
        if (c >= '1' && c <= '9') unsupported("backreference \\" + std::string(1, c));
        if (isalnum(static_cast<unsigned char>(c))) fail("unknown escape \\" + std::string(1, c));
        --i_;
        {
          const uint32_t cp = next_codepoint();
          return {{cp, cp}};
        }
    }
  }

  Expr char_class() {
    bool negated = false;
    if (!at_end() && peek() == '^') {
      negated = true;
      ++i_;
    }
    std::vector<CodepointRange> ranges;
    std::vector<std::vector<CodepointRange>> negated_parts;  // \D \W \S inside a class
    bool first = true;
    while (true) {
      if (at_end()) fail("unterminated character class");
      if (peek() == ']' && !first) break;
      if (peek() == ']' && first) {
        // ECMAScript: [] matches nothing, [^] matches anything.
        break;
      }
      first = false;
      uint32_t lo;
      bool single = true;
      if (peek() == '\\') {
        ++i_;
        bool neg;
        auto part = escape(true, neg);
        if (neg) {
          negated_parts.push_back(part);
          single = false;
        } else if (part.size() != 1 || part[0].lo != part[0].hi) {
          ranges.insert(ranges.end(), part.begin(), part.end());
          single = false;
        }
        lo = part[0].lo;
      } else {
        lo = next_codepoint();
      }
      if (!single) continue;
      if (!at_end() && peek() == '-' && i_ + 1 < end_ && p_[i_ + 1] != ']') {
        ++i_;
        uint32_t hi;
        if (peek() == '\\') {
          ++i_;
          bool neg;
          auto part = escape(true, neg);
          if (neg || part.size() != 1 || part[0].lo != part[0].hi) fail("class escape as a range end");
          hi = part[0].lo;
        } else {
          hi = next_codepoint();
        }
        if (hi < lo) fail("range out of order in character class");
        ranges.push_back({lo, hi});
      } else {
        ranges.push_back({lo, lo});
      }
    }
    ++i_;  // ']'
    for (const auto& part : negated_parts)
      for (const auto& r : normalize_ranges(part, true)) ranges.push_back(r);
    return cls(std::move(ranges), negated);
  }

  Expr atom() {
    const char c = peek();
    switch (c) {
      case '(': {
        ++i_;
        if (!at_end() && peek() == '?') {
          ++i_;
          if (at_end()) fail("bad group");
          if (peek() == ':') {
            ++i_;
          } else if (peek() == '=' || peek() == '!') {
            unsupported("lookahead (?" + std::string(1, peek()) + ")");
          } else if (peek() == '<' && i_ + 1 < end_ && (p_[i_ + 1] == '=' || p_[i_ + 1] == '!')) {
            unsupported("lookbehind (?<" + std::string(1, p_[i_ + 1]) + ")");
          } else if (peek() == '<') {
            const size_t close = p_.find('>', i_);
            if (close == std::string_view::npos || close >= end_) fail("bad group name");
            i_ = close + 1;
          } else {
            unsupported("group modifier (?" + std::string(1, peek()) + ")");
          }
        }
        Expr inner = alternation();
        if (at_end() || peek() != ')') fail("missing ')'");
        ++i_;
        return inner;
      }
      case '[':
        ++i_;
        return char_class();
      case '.':
        ++i_;
        return cls(kDotExcluded, true);
      case '\\': {
        ++i_;
        bool neg;
        auto ranges = escape(false, neg);
        return cls(std::move(ranges), neg);
      }
      case '^':
      case '$':
        unsupported(std::string("anchor ") + c + " inside the pattern");
      case '*':
      case '+':
      case '?':
        fail("nothing to repeat");
      default: {
        const uint32_t cp = next_codepoint();
        return cls({{cp, cp}});
      }
    }
  }

  std::string_view p_;
  RegexTarget target_;
  size_t i_ = 0;
  size_t end_ = 0;
};

}  // namespace

RegexExpr parse_regex(std::string_view pattern, RegexTarget target) {
  return RegexParser(pattern, target).parse();
}

Grammar regex_grammar(std::string_view pattern) {
  RegexExpr r = parse_regex(pattern, RegexTarget::kBytes);
  GrammarBuilder b;
  const uint32_t root = b.add("root", std::move(r.expr));
  return std::move(b).build(root);
}

}  // namespace zinfer::grammar
