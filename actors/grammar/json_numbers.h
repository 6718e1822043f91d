// JSON numbers in ranges, as grammar. Ranges of integers are regular and are compiled exactly
// (canonical decimal: no leading zeros, no '+', no exponent). Numbers with bounds are compiled
// exactly when every bound is an integer value: the output then has no exponent, and the
// fraction digits are free except at a bound (v <= 5 allows 5, 5.0, 5.00 but not 5.1). A bound
// with a fractional part on a number is UnsupportedError; bounds beyond +-10^18 too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "actors/grammar/grammar.h"

namespace zinfer::grammar {

struct NumberBounds {
  std::optional<double> minimum, maximum;  // as the schema gives them
  bool exclusive_minimum = false, exclusive_maximum = false;
  bool any() const { return minimum || maximum; }
};

// `path` names the schema location in errors.
Expr json_integer(const NumberBounds& bounds, const std::string& path);
Expr json_number(const NumberBounds& bounds, const std::string& path);

// Canonical decimals of the non-negative integers in [lo, hi]; hi < 0 means unbounded above.
Expr decimal_range(int64_t lo, int64_t hi);

}  // namespace zinfer::grammar
