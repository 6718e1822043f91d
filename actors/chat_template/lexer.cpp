#include "actors/chat_template/lexer.h"

#include <algorithm>
#include <cctype>

#include "actors/chat_template/template_error.h"
#include "actors/text/utf8.h"

namespace zinfer::chat {
namespace {

// Jinja normalises every newline sequence to "\n" and, without keep_trailing_newline, drops one
// trailing newline of the template.
std::string normalize_newlines(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string rstrip_whitespace(const std::string& s) { return utf8::strip(s, std::nullopt, false, true); }

class Lexer {
 public:
  explicit Lexer(const std::string& source) : src_(normalize_newlines(source)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    bool line_starting = true;  // the previous token ended a line (or this is the template start)
    while (pos_ < src_.size()) {
      const size_t tag = find_tag_start(pos_);
      std::string text = src_.substr(pos_, tag - pos_);
      if (tag == src_.size()) {
        emit_text(std::move(text), pos_);
        break;
      }
      const char kind = src_[tag + 1];  // '{' variable, '%' block, '#' comment
      const char modifier = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (modifier == '-') {
        text = rstrip_whitespace(text);
      } else if (modifier != '+' && kind != '{') {
        // lstrip_blocks: spaces and tabs between the start of the line and a block or comment tag go.
        const size_t nl = text.rfind('\n');
        const size_t line_start = nl == std::string::npos ? 0 : nl + 1;
        if ((line_start > 0 || line_starting) &&
            text.find_first_not_of(" \t", line_start) == std::string::npos) {
          text.erase(line_start);
        }
      }
      emit_text(std::move(text), pos_);
      pos_ = tag + 2 + ((modifier == '-' || modifier == '+') ? 1 : 0);
      if (kind == '#') {
        line_starting = skip_comment(tag);
      } else {
        line_starting = lex_tag(kind, tag);
      }
    }
    tokens_.push_back(Token{Token::Type::End, "", position(src_.size()).first, position(src_.size()).second});
    return std::move(tokens_);
  }

 private:
  std::pair<int, int> position(size_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const size_t line = static_cast<size_t>(it - line_starts_.begin());
    return {static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
  }

  [[noreturn]] void fail(const std::string& message, size_t offset) const {
    const auto [line, column] = position(offset);
    throw TemplateError(message, line, column);
  }

  void push(Token::Type type, std::string text, size_t offset) {
    const auto [line, column] = position(offset);
    tokens_.push_back(Token{type, std::move(text), line, column});
  }

  void emit_text(std::string text, size_t offset) {
    if (!text.empty()) push(Token::Type::Text, std::move(text), offset);
  }

  size_t find_tag_start(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return src_.size();
  }

  // After an end delimiter: "-" strips all following whitespace; a block or comment end without
  // "+" drops one following newline (trim_blocks). Returns whether what was consumed ended a line.
  bool consume_after_end(bool strip_all, bool trim_newline) {
    const size_t start = pos_;
    if (strip_all) {
      while (pos_ < src_.size()) {
        size_t next = pos_;
        if (!utf8::is_space(utf8::next(src_, next))) break;
        pos_ = next;
      }
    } else if (trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
    return pos_ > start && src_[pos_ - 1] == '\n';
  }

  bool skip_comment(size_t tag) {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) fail("unclosed comment (missing '#}')", tag);
    const char before = end > pos_ ? src_[end - 1] : '\0';
    pos_ = end + 2;
    return consume_after_end(before == '-', before != '+');
  }

  // Expression tokens up to the matching "}}" or "%}"; brackets must balance first, so a dict
  // literal's "}}" does not end the tag.
  bool lex_tag(char kind, size_t tag) {
    const bool block = kind == '%';
    push(block ? Token::Type::BlockBegin : Token::Type::VariableBegin, block ? "{%" : "{{", tag);
    const std::string close = block ? "%}" : "}}";
    std::vector<char> brackets;
    while (true) {
      while (pos_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[pos_]))) ++pos_;
      if (pos_ >= src_.size()) fail(std::string("unclosed tag (missing '") + close + "')", tag);
      if (brackets.empty()) {
        const bool minus = src_[pos_] == '-' && src_.compare(pos_ + 1, 2, close) == 0;
        const bool plus = block && src_[pos_] == '+' && src_.compare(pos_ + 1, 2, close) == 0;
        if (minus || plus || src_.compare(pos_, 2, close) == 0) {
          push(block ? Token::Type::BlockEnd : Token::Type::VariableEnd, close, pos_);
          pos_ += 2 + (minus || plus ? 1 : 0);
          return consume_after_end(minus, block && !plus);
        }
      }
      lex_expression_token(brackets);
    }
  }

  void lex_expression_token(std::vector<char>& brackets) {
    const size_t start = pos_;
    const char c = src_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
      push(Token::Type::Name, src_.substr(start, pos_ - start), start);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      lex_number();
    } else if (c == '\'' || c == '"') {
      lex_string();
    } else {
      static const char* const two_char[] = {"//", "**", "==", "!=", "<=", ">="};
      for (const char* op : two_char) {
        if (src_.compare(pos_, 2, op) == 0) {
          pos_ += 2;
          push(Token::Type::Operator, op, start);
          return;
        }
      }
      if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) == std::string_view::npos) {
        fail(std::string("unexpected character '") + c + "' in tag", start);
      }
      if (c == '(' || c == '[' || c == '{') brackets.push_back(c);
      if (c == ')' || c == ']' || c == '}') {
        const char open = c == ')' ? '(' : c == ']' ? '[' : '{';
        if (brackets.empty() || brackets.back() != open) fail(std::string("unbalanced '") + c + "'", start);
        brackets.pop_back();
      }
      ++pos_;
      push(Token::Type::Operator, std::string(1, c), start);
    }
  }

  void lex_digits(std::string& out) {
    while (pos_ < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) {
      if (src_[pos_] != '_') out += src_[pos_];
      ++pos_;
    }
  }

  void lex_number() {
    const size_t start = pos_;
    std::string text;
    lex_digits(text);
    bool is_float = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      is_float = true;
      text += '.';
      ++pos_;
      lex_digits(text);
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p]))) {
        is_float = true;
        text += src_.substr(pos_, p - pos_);
        pos_ = p;
        lex_digits(text);
      }
    }
    push(is_float ? Token::Type::Float : Token::Type::Integer, text, start);
  }

  // A quoted string with Python's escapes; an unknown escape keeps its backslash, as in Python.
  void lex_string() {
    const size_t start = pos_;
    const char quote = src_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) fail("unterminated string literal", start);
      const char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= src_.size()) fail("unterminated string literal", start);
      const char e = src_[pos_++];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case '0': value += '\0'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': break;  // a backslash-newline continues the line
        case 'x': value_hex_escape(value, 2, start); break;
        case 'u': value_hex_escape(value, 4, start); break;
        case 'U': value_hex_escape(value, 8, start); break;
        default:
          value += '\\';
          value += e;
      }
    }
    push(Token::Type::String, std::move(value), start);
  }

  void value_hex_escape(std::string& value, int digits, size_t start) {
    if (pos_ + digits > src_.size()) fail("truncated \\x/\\u escape in string literal", start);
    char32_t cp = 0;
    for (int i = 0; i < digits; ++i) {
      const char h = src_[pos_++];
      if (!std::isxdigit(static_cast<unsigned char>(h))) fail("bad hex digit in string escape", start);
      cp = cp * 16 + static_cast<char32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
    }
    utf8::append(value, cp);
  }

  std::string src_;
  size_t pos_ = 0;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(source).run(); }

}  // namespace zinfer::chat
