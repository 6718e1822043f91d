// The token stream under the parser: look-ahead, consuming tokens, and errors that point at the
// current token. Shared by the expression and the statement parser.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "actors/chat_template/ast.h"
#include "actors/chat_template/lexer.h"
#include "actors/chat_template/template_error.h"

namespace zinfer::chat {

class TokenCursor {
 public:
  explicit TokenCursor(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

 protected:
  using T = Token::Type;

  const Token& cur() const { return tokens_[i_]; }
  const Token& peek(size_t ahead = 1) const { return tokens_[std::min(i_ + ahead, tokens_.size() - 1)]; }
  ast::Position pos() const { return {cur().line, cur().column}; }
  const Token& advance() { return tokens_[i_ < tokens_.size() - 1 ? i_++ : i_]; }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case T::End: return "end of template";
      case T::Text: return "template text";
      case T::BlockEnd: return "'%}'";
      case T::VariableEnd: return "'}}'";
      case T::String: return "string literal";
      default: return "'" + t.text + "'";
    }
  }

  [[noreturn]] void fail(const std::string& message) const { throw TemplateError(message, cur().line, cur().column); }

  // Bounds the recursion of nested expressions and blocks, so that a hostile template is an
  // error rather than a stack overflow.
  static constexpr int kMaxNesting = 64;
  struct NestingGuard {
    TokenCursor& parser;
    explicit NestingGuard(TokenCursor& p) : parser(p) {
      if (++parser.nesting_ > kMaxNesting) parser.fail("template nested too deeply (more than 64 levels)");
    }
    ~NestingGuard() { --parser.nesting_; }
  };

  bool is_op(const char* op) const { return cur().type == T::Operator && cur().text == op; }
  bool is_name(const char* name) const { return cur().type == T::Name && cur().text == name; }
  bool accept_op(const char* op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool accept_name(const char* name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) fail(std::string("expected '") + op + "', got " + describe(cur()));
  }
  std::string expect_name(const char* what) {
    if (cur().type != T::Name) fail(std::string("expected ") + what + ", got " + describe(cur()));
    return advance().text;
  }
  void expect_block_end() {
    if (cur().type != T::BlockEnd) fail("expected '%}', got " + describe(cur()));
    advance();
  }

  std::vector<Token> tokens_;
  size_t i_ = 0;
  int nesting_ = 0;
};

}  // namespace zinfer::chat
