// When each request is sent. Intervals between requests are drawn from a gamma distribution with
// shape = burstiness and mean 1/rate (scale = 1 / (rate * burstiness)): burstiness 1 is the
// exponential, i.e. a Poisson process; below 1 the arrivals come in bursts, above 1 they are more
// even. A rate of +inf sends everything at once. The same seed gives the same schedule.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace zinfer::bench {

class ArrivalProcess {
 public:
  // Throws std::invalid_argument for a rate <= 0 or a burstiness <= 0.
  ArrivalProcess(double rate, double burstiness, uint64_t seed);
  double next_interval_s();  // 0 when the rate is infinite

 private:
  bool all_at_once_;
  std::mt19937_64 rng_;
  std::gamma_distribution<double> gamma_;
};

// Send offsets (seconds from the start) of n requests: the first at 0, then cumulative intervals.
std::vector<double> arrival_offsets(size_t n, double rate, double burstiness, uint64_t seed);

}  // namespace zinfer::bench
