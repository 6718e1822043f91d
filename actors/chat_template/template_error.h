// The one error type of the chat-template interpreter. Parse errors and render errors both carry
// the line:column in the template source where they arose, so a user can find the construct.
#pragma once

#include <stdexcept>
#include <string>

namespace zinfer::chat {

class TemplateError : public std::runtime_error {
 public:
  // line/column are 1-based; 0 means "no position" (e.g. a file could not be read).
  TemplateError(const std::string& message, int line = 0, int column = 0)
      : std::runtime_error(line > 0 ? "chat template " + std::to_string(line) + ":" +
                                          std::to_string(column) + ": " + message
                                    : "chat template: " + message),
        message_(message), line_(line), column_(column) {}

  const std::string& message() const { return message_; }  // without the position prefix
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string message_;
  int line_;
  int column_;
};

// Raised by built-in filters, tests and methods, which do not know where in the template they
// were called; the evaluator turns it into a TemplateError carrying the call's position.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace zinfer::chat
