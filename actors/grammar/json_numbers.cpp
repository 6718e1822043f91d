#include "actors/grammar/json_numbers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "actors/grammar/errors.h"

namespace zinfer::grammar {

namespace {

constexpr int64_t kUnboundedAbove = -1;
constexpr double kLimit = 1e18;

Expr digit() { return Expr::byte_range('0', '9'); }

// Every digit string (leading zeros allowed) of x.size() digits between x and y.
Expr fixed_width_range(const std::string& x, const std::string& y) {
  if (x.empty()) return Expr::empty();
  if (x[0] == y[0]) return Expr::seq({Expr::byte(static_cast<uint8_t>(x[0])), fixed_width_range(x.substr(1), y.substr(1))});
  const size_t rest = x.size() - 1;
  std::vector<Expr> alts;
  alts.push_back(Expr::seq({Expr::byte(static_cast<uint8_t>(x[0])), fixed_width_range(x.substr(1), std::string(rest, '9'))}));
  if (y[0] - x[0] > 1)
    alts.push_back(Expr::seq({Expr::byte_range(static_cast<uint8_t>(x[0] + 1), static_cast<uint8_t>(y[0] - 1)),
                              Expr::repeat(digit(), static_cast<uint32_t>(rest), static_cast<uint32_t>(rest))}));
  alts.push_back(Expr::seq({Expr::byte(static_cast<uint8_t>(y[0])), fixed_width_range(std::string(rest, '0'), y.substr(1))}));
  return Expr::alt(std::move(alts));
}

int64_t pow10(size_t n) {
  int64_t v = 1;
  while (n--) v *= 10;
  return v;
}

// The fraction allowed after an integer part.
enum class Frac { kNone, kAny, kZero, kPositive };

Frac intersect(Frac a, Frac b) {
  if (a == Frac::kNone || b == Frac::kNone) return Frac::kNone;
  if (a == Frac::kAny) return b;
  if (b == Frac::kAny) return a;
  return a == b ? a : Frac::kNone;
}

Expr frac(Frac f) {
  switch (f) {
    case Frac::kAny: return Expr::optional(Expr::seq({Expr::byte('.'), Expr::plus(digit())}));
    case Frac::kZero: return Expr::optional(Expr::seq({Expr::byte('.'), Expr::plus(Expr::byte('0'))}));
    case Frac::kPositive:
      return Expr::seq({Expr::byte('.'), Expr::star(Expr::byte('0')), Expr::byte_range('1', '9'), Expr::star(digit())});
    case Frac::kNone: break;
  }
  return Expr::byte_set(ByteSet{});
}

// Magnitudes m = n + f (n the integer part, f in [0,1)) with lo <= m <= hi (each optional, possibly
// exclusive, integer-valued): the integer-part intervals with the fraction each allows.
struct Piece {
  int64_t lo, hi;  // hi < 0: unbounded
  Frac frac;
};

std::vector<Piece> magnitude_pieces(std::optional<int64_t> lo, bool lo_excl, std::optional<int64_t> hi, bool hi_excl) {
  auto lower = [&](int64_t n) {
    if (!lo) return Frac::kAny;
    if (n > *lo) return Frac::kAny;
    if (n == *lo) return lo_excl ? Frac::kPositive : Frac::kAny;
    return Frac::kNone;
  };
  auto upper = [&](int64_t n) {
    if (!hi) return Frac::kAny;
    if (n < *hi) return Frac::kAny;
    if (n == *hi) return hi_excl ? Frac::kNone : Frac::kZero;
    return Frac::kNone;
  };
  std::vector<int64_t> cuts{0};
  for (auto v : {lo, hi})
    if (v)
      for (int64_t c : {*v, *v + 1})
        if (c > 0) cuts.push_back(c);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Piece> pieces;
  for (size_t i = 0; i < cuts.size(); ++i) {
    const int64_t s = cuts[i];
    const int64_t e = i + 1 < cuts.size() ? cuts[i + 1] - 1 : kUnboundedAbove;
    const Frac f = intersect(lower(s), upper(s));
    if (f != Frac::kNone) pieces.push_back({s, e, f});
  }
  return pieces;
}

std::optional<int64_t> checked(std::optional<double> v, const std::string& what, const std::string& path) {
  if (!v) return std::nullopt;
  if (!std::isfinite(*v) || std::fabs(*v) >= kLimit)
    throw UnsupportedError(what, path + ": " + what + " beyond +-1e18 is not supported");
  return static_cast<int64_t>(*v);
}

// Numbers (integer parts from the pieces of both signs) in the bounds.
Expr signed_pieces(const NumberBounds& b, bool integer, const std::string& path) {
  std::optional<double> lo = b.minimum, hi = b.maximum;
  bool lo_excl = b.exclusive_minimum, hi_excl = b.exclusive_maximum;
  if (integer) {
    // Integers between real bounds are integers between integer bounds.
    if (lo) lo = lo_excl ? std::floor(*lo) + 1 : std::ceil(*lo), lo_excl = false;
    if (hi) hi = hi_excl ? std::ceil(*hi) - 1 : std::floor(*hi), hi_excl = false;
  } else {
    for (auto [v, name] : {std::pair{lo, "minimum"}, std::pair{hi, "maximum"}})
      if (v && std::floor(*v) != *v)
        throw UnsupportedError(name, path + ": a fractional " + std::string(name) +
                                         " on a number is not supported (integer-valued bounds are)");
  }
  const auto ilo = checked(lo, "minimum", path), ihi = checked(hi, "maximum", path);
  std::vector<Expr> alts;
  auto emit = [&](const std::vector<Piece>& pieces, bool negative) {
    for (const Piece& p : pieces) {
      if (integer && p.frac == Frac::kPositive) continue;
      if (negative && p.lo == 0 && (integer || p.frac == Frac::kZero)) {
        // -0 is 0; leave it to the non-negative side.
        if (p.hi == 0) continue;
        std::vector<Expr> seq{Expr::byte('-'), decimal_range(1, p.hi)};
        if (!integer) seq.push_back(frac(p.frac));
        alts.push_back(Expr::seq(std::move(seq)));
        continue;
      }
      std::vector<Expr> seq;
      if (negative) seq.push_back(Expr::byte('-'));
      seq.push_back(decimal_range(p.lo, p.hi));
      if (!integer) seq.push_back(frac(p.frac));
      alts.push_back(Expr::seq(std::move(seq)));
    }
  };
  // v >= 0: magnitude v in [max(lo, 0), hi]; a negative lower bound does not bind.
  if (!ihi || *ihi > 0 || (*ihi == 0 && !hi_excl)) {
    std::optional<int64_t> mlo = ilo;
    bool mlo_excl = lo_excl;
    if (mlo && *mlo < 0) mlo.reset(), mlo_excl = false;
    emit(magnitude_pieces(mlo, mlo_excl, ihi, hi_excl), false);
  }
  // v < 0: magnitude -v in (0, -lo] bounded below by -hi when hi < 0.
  if (!ilo || *ilo < 0) {
    std::optional<int64_t> mhi, mlo;
    bool mhi_excl = lo_excl, mlo_excl = false;
    if (ilo) mhi = -*ilo;
    if (ihi && *ihi < 0) mlo = -*ihi, mlo_excl = hi_excl;
    else mlo = 0, mlo_excl = true;  // strictly negative
    emit(magnitude_pieces(mlo, mlo_excl, mhi, mhi_excl), true);
  }
  if (alts.empty())
    throw GrammarError(path, path + ": the bounds leave no " + std::string(integer ? "integer" : "number"));
  return Expr::alt(std::move(alts));
}

}  // namespace

Expr decimal_range(int64_t lo, int64_t hi) {
  std::vector<Expr> alts;
  const size_t first = std::to_string(lo).size();
  const size_t last = hi < 0 ? first : std::to_string(hi).size();
  for (size_t len = first; len <= last; ++len) {
    const int64_t a = std::max(lo, len == 1 ? int64_t{0} : pow10(len - 1));
    const int64_t b = (hi < 0 || len < last) ? pow10(len) - 1 : hi;
    if (a > b) continue;
    alts.push_back(fixed_width_range(std::to_string(a), std::to_string(b)));
  }
  if (hi < 0)  // every longer number
    alts.push_back(Expr::seq({Expr::byte_range('1', '9'), Expr::repeat(digit(), static_cast<uint32_t>(first), kUnbounded)}));
  return Expr::alt(std::move(alts));
}

Expr json_integer(const NumberBounds& bounds, const std::string& path) {
  if (!bounds.any())
    return Expr::seq({Expr::optional(Expr::byte('-')),
                      Expr::alt({Expr::byte('0'), Expr::seq({Expr::byte_range('1', '9'), Expr::star(digit())})})});
  return signed_pieces(bounds, true, path);
}

Expr json_number(const NumberBounds& bounds, const std::string& path) {
  if (!bounds.any()) {
    Expr integer = json_integer(bounds, path);
    Expr fraction = Expr::optional(Expr::seq({Expr::byte('.'), Expr::plus(digit())}));
    Expr exponent = Expr::optional(Expr::seq({Expr::byte_set(ByteSet().set('e').set('E')),
                                              Expr::optional(Expr::byte_set(ByteSet().set('+').set('-'))),
                                              Expr::plus(digit())}));
    return Expr::seq({std::move(integer), std::move(fraction), std::move(exponent)});
  }
  return signed_pieces(bounds, false, path);
}

}  // namespace zinfer::grammar
