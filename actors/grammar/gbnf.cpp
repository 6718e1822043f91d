#include "actors/grammar/gbnf.h"

#include <map>
#include <string>

#include "actors/grammar/errors.h"
#include "actors/grammar/utf8_class.h"

namespace zinfer::grammar {

namespace {

bool is_name_char(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : t_(text) {}

  Grammar parse() {
    skip_space(true);
    while (i_ < t_.size()) {
      const std::string name = parse_name();
      skip_space(false);
      if (t_.substr(i_, 3) != "::=") fail("expected '::=' after rule name '" + name + "'");
      i_ += 3;
      skip_space(true);
      const uint32_t id = rule_id(name);
      if (b_.defined(id)) throw GrammarError(name, "grammar: rule '" + name + "' is defined twice");
      b_.define(id, alternation(false));
      if (i_ < t_.size() && t_[i_] != '\n' && t_[i_] != '\r') fail("expected the end of the line");
      skip_space(true);
    }
    auto root = ids_.find("root");
    if (root == ids_.end() || !b_.defined(root->second))
      throw GrammarError("root", "grammar: there is no 'root' rule");
    return std::move(b_).build(root->second);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1;
    for (size_t k = 0; k < i_ && k < t_.size(); ++k) line += t_[k] == '\n';
    throw GrammarError("grammar", "grammar: " + what + " (line " + std::to_string(line) + ")");
  }

  uint32_t rule_id(const std::string& name) {
    auto [it, inserted] = ids_.try_emplace(name, 0);
    if (inserted) it->second = b_.declare(name);
    return it->second;
  }

  // Spaces, tabs and comments; newlines too when `newlines`.
  void skip_space(bool newlines) {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == ' ' || c == '\t') ++i_;
      else if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (newlines && (c == '\n' || c == '\r')) ++i_;
      else break;
    }
  }

  std::string parse_name() {
    const size_t start = i_;
    while (i_ < t_.size() && is_name_char(t_[i_])) ++i_;
    if (i_ == start) fail("expected a rule name");
    return std::string(t_.substr(start, i_ - start));
  }

  // A top-level body ends at a newline unless the next line goes on with '|'.
  bool continues_with_bar() {
    size_t k = i_;
    while (k < t_.size() && (t_[k] == ' ' || t_[k] == '\t' || t_[k] == '\n' || t_[k] == '\r' || t_[k] == '#')) {
      if (t_[k] == '#')
        while (k < t_.size() && t_[k] != '\n') ++k;
      else ++k;
    }
    if (k < t_.size() && t_[k] == '|') {
      i_ = k;
      return true;
    }
    return false;
  }

  Expr alternation(bool nested) {
    std::vector<Expr> alts{sequence(nested)};
    while (i_ < t_.size() && (t_[i_] == '|' || (!nested && continues_with_bar()))) {
      ++i_;
      skip_space(true);
      alts.push_back(sequence(nested));
    }
    return Expr::alt(std::move(alts));
  }

  Expr sequence(bool nested) {
    std::vector<Expr> items;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '|' || c == ')' || c == '\n' || c == '\r') break;
      Expr e = element(nested);
      repetition(e, nested);
      items.push_back(std::move(e));
      skip_space(nested);
    }
    return Expr::seq(std::move(items));
  }

  uint32_t number() {
    const size_t start = i_;
    uint64_t v = 0;
    while (i_ < t_.size() && isdigit(static_cast<unsigned char>(t_[i_]))) {
      v = v * 10 + static_cast<uint64_t>(t_[i_] - '0');
      if (v > 100000) fail("repetition count too large");
      ++i_;
    }
    if (i_ == start) fail("expected a number");
    return static_cast<uint32_t>(v);
  }

  void repetition(Expr& e, bool nested) {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '*') e = Expr::star(std::move(e)), ++i_;
      else if (c == '+') e = Expr::plus(std::move(e)), ++i_;
      else if (c == '?') e = Expr::optional(std::move(e)), ++i_;
      else if (c == '{') {
        ++i_;
        skip_space(nested);
        const uint32_t min = number();
        skip_space(nested);
        uint32_t max = min;
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          skip_space(nested);
          max = (i_ < t_.size() && t_[i_] == '}') ? kUnbounded : number();
          skip_space(nested);
        }
        if (i_ >= t_.size() || t_[i_] != '}') fail("expected '}'");
        ++i_;
        if (max < min) fail("repetition {m,n} with n < m");
        e = Expr::repeat(std::move(e), min, max);
      } else {
        return;
      }
    }
  }

  uint32_t hex(size_t digits) {
    uint32_t v = 0;
    for (size_t k = 0; k < digits; ++k) {
      if (i_ >= t_.size() || !isxdigit(static_cast<unsigned char>(t_[i_]))) fail("bad hexadecimal escape");
      const char c = t_[i_++];
      v = v * 16 + static_cast<uint32_t>(isdigit(static_cast<unsigned char>(c)) ? c - '0' : (tolower(c) - 'a' + 10));
    }
    return v;
  }

  uint32_t char_in(char close) {
    if (i_ >= t_.size()) fail("unterminated literal or class");
    if (t_[i_] == '\\') {
      ++i_;
      if (i_ >= t_.size()) fail("trailing backslash");
      const char c = t_[i_++];
      switch (c) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case '\\': return '\\';
        case '"': return '"';
        case '[': return '[';
        case ']': return ']';
        case '-': return '-';
        case '^': return '^';
        case 'x': return hex(2);
        case 'u': return hex(4);
        case 'U': return hex(8);
        default: fail(std::string("unknown escape \\") + c);
      }
    }
    uint32_t cp;
    size_t pos = i_;
    if (!utf8_decode(t_, pos, cp)) fail("invalid UTF-8");
    i_ = pos;
    (void)close;
    return cp;
  }

  Expr element(bool nested) {
    const char c = t_[i_];
    if (c == '"') {
      ++i_;
      std::vector<Expr> items;
      while (true) {
        if (i_ >= t_.size() || t_[i_] == '\n') fail("unterminated literal");
        if (t_[i_] == '"') break;
        const uint32_t cp = char_in('"');
        if (cp > kMaxCodepoint || (cp >= 0xD800 && cp <= 0xDFFF)) fail("escape outside Unicode");
        items.push_back(Expr::literal(utf8_encode(cp)));
      }
      ++i_;
      return Expr::seq(std::move(items));
    }
    if (c == '[') {
      ++i_;
      bool negated = false;
      if (i_ < t_.size() && t_[i_] == '^') negated = true, ++i_;
      std::vector<CodepointRange> ranges;
      while (true) {
        if (i_ >= t_.size()) fail("unterminated character class");
        if (t_[i_] == ']') break;
        const uint32_t lo = char_in(']');
        uint32_t hi = lo;
        if (i_ + 1 < t_.size() && t_[i_] == '-' && t_[i_ + 1] != ']') {
          ++i_;
          hi = char_in(']');
          if (hi < lo) fail("range out of order in character class");
        }
        ranges.push_back({lo, hi});
      }
      ++i_;
      return utf8_class(std::move(ranges), negated);
    }
    if (c == '.') {
      ++i_;
      return utf8_class({}, true);
    }
    if (c == '(') {
      ++i_;
      skip_space(true);
      Expr inner = alternation(true);
      skip_space(true);
      if (i_ >= t_.size() || t_[i_] != ')') fail("missing ')'");
      ++i_;
      return inner;
    }
    if (c == '<') throw UnsupportedError("token reference", "grammar: token references (<...>) are not supported");
    if (is_name_char(c)) {
      const std::string name = parse_name();
      return Expr::ref(rule_id(name));
    }
    (void)nested;
    fail(std::string("unexpected character '") + c + "'");
  }

  std::string_view t_;
  size_t i_ = 0;
  GrammarBuilder b_;
  std::map<std::string, uint32_t> ids_;
};

}  // namespace

Grammar gbnf_grammar(std::string_view text) { return GbnfParser(text).parse(); }

}  // namespace zinfer::grammar
