// The errors a grammar source can raise. The API turns both into a 400: GrammarError for input
// that is malformed (a regex that does not parse, a schema that is not a schema), UnsupportedError
// for a well-formed construct this engine does not compile (a schema keyword, a regex lookahead);
// construct() names it so the message can point at the offending part.
#pragma once

#include <stdexcept>
#include <string>

namespace zinfer::grammar {

class GrammarError : public std::runtime_error {
 public:
  GrammarError(std::string construct, const std::string& message)
      : std::runtime_error(message), construct_(std::move(construct)) {}
  const std::string& construct() const { return construct_; }

 private:
  std::string construct_;
};

class UnsupportedError : public GrammarError {
 public:
  using GrammarError::GrammarError;
};

}  // namespace zinfer::grammar
