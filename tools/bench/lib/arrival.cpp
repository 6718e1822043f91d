#include "tools/bench/lib/arrival.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace zinfer::bench {
namespace {

std::gamma_distribution<double> make_gamma(double rate, double burstiness) {
  if (!(rate > 0)) throw std::invalid_argument("--request-rate must be > 0 (or inf), got " + std::to_string(rate));
  if (!(burstiness > 0)) throw std::invalid_argument("--burstiness must be > 0, got " + std::to_string(burstiness));
  if (std::isinf(rate)) return std::gamma_distribution<double>(1.0, 1.0);  // unused
  return std::gamma_distribution<double>(burstiness, 1.0 / (rate * burstiness));
}

}  // namespace

ArrivalProcess::ArrivalProcess(double rate, double burstiness, uint64_t seed)
    : all_at_once_(std::isinf(rate)), rng_(seed), gamma_(make_gamma(rate, burstiness)) {}

double ArrivalProcess::next_interval_s() {
  if (all_at_once_) return 0.0;
  return gamma_(rng_);
}

std::vector<double> arrival_offsets(size_t n, double rate, double burstiness, uint64_t seed) {
  ArrivalProcess process(rate, burstiness, seed);
  std::vector<double> offsets(n, 0.0);
  double t = 0.0;
  for (size_t i = 0; i < n; ++i) {
    offsets[i] = t;
    t += process.next_interval_s();
  }
  return offsets;
}

}  // namespace zinfer::bench
