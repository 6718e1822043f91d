// The arrival process: Poisson (exponential intervals), gamma with --burstiness, and inf.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "tools/bench/lib/arrival.h"

namespace zinfer::bench {
namespace {

struct Moments {
  double mean = 0, var = 0;
};

Moments draw(double rate, double burstiness, uint64_t seed, int n) {
  ArrivalProcess p(rate, burstiness, seed);
  std::vector<double> xs(static_cast<size_t>(n));
  for (auto& x : xs) x = p.next_interval_s();
  Moments m;
  for (double x : xs) m.mean += x;
  m.mean /= n;
  for (double x : xs) m.var += (x - m.mean) * (x - m.mean);
  m.var /= n;
  return m;
}

TEST(Arrival, PoissonMeanRateWithinFivePercent) {
  for (double rate : {1.0, 8.0, 250.0}) {
    const Moments m = draw(rate, 1.0, 42, 10000);
    const double measured_rate = 1.0 / m.mean;
    EXPECT_NEAR(measured_rate, rate, 0.05 * rate) << "rate " << rate;
    // Exponential intervals: the standard deviation equals the mean (coefficient of variation 1).
    EXPECT_NEAR(std::sqrt(m.var) / m.mean, 1.0, 0.05) << "rate " << rate;
  }
}

TEST(Arrival, GammaKeepsTheMeanAndSetsTheSpread) {
  // shape k = burstiness, mean 1/rate, squared coefficient of variation 1/k.
  for (double k : {0.5, 4.0}) {
    const Moments m = draw(5.0, k, 7, 10000);
    EXPECT_NEAR(1.0 / m.mean, 5.0, 0.25) << "burstiness " << k;
    EXPECT_NEAR(m.var / (m.mean * m.mean), 1.0 / k, 0.1 / k) << "burstiness " << k;
  }
}

TEST(Arrival, FixedSeedIsReproducible) {
  const auto a = arrival_offsets(1000, 3.0, 1.0, 123);
  const auto b = arrival_offsets(1000, 3.0, 1.0, 123);
  const auto c = arrival_offsets(1000, 3.0, 1.0, 124);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.front(), 0.0);  // the first request goes at once
  for (size_t i = 1; i < a.size(); ++i) EXPECT_GE(a[i], a[i - 1]);
}

TEST(Arrival, InfiniteRateSendsEverythingAtOnce) {
  const auto offsets = arrival_offsets(50, std::numeric_limits<double>::infinity(), 1.0, 1);
  for (double t : offsets) EXPECT_EQ(t, 0.0);
}

TEST(Arrival, RejectsBadSettings) {
  EXPECT_THROW(ArrivalProcess(0.0, 1.0, 1), std::invalid_argument);
  EXPECT_THROW(ArrivalProcess(-2.0, 1.0, 1), std::invalid_argument);
  EXPECT_THROW(ArrivalProcess(1.0, 0.0, 1), std::invalid_argument);
  EXPECT_THROW(ArrivalProcess(std::nan(""), 1.0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace zinfer::bench
