// The measurement window of `zinfer-bench scheduler --deployments`: when it opens, when it closes,
// what it reports, and which Stats sequences make it start again or fail.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tools/bench/lib/step_window.h"

namespace zinfer::bench {
namespace {

using std::chrono::milliseconds;

// A Stats at `ms` milliseconds: `running` sequences, `steps` plans made, `tokens` generated.
StatsSample at(int ms, int32_t running, int64_t steps, int64_t tokens, int32_t waiting = 0) {
  StatsSample s;
  s.at = std::chrono::steady_clock::time_point(milliseconds(ms));
  s.stats.running = running;
  s.stats.waiting = waiting;
  s.stats.steps = steps;
  s.stats.generation_tokens = tokens;
  s.detok_messages = tokens + 4;  // one message per token after the 4 RequestStarts
  s.detok_bytes = 10 * s.detok_messages;
  return s;
}

TEST(StepWindow, OpensWhenAllRunAndClosesAfterTheSteps) {
  StepWindow w(4, 100);
  EXPECT_FALSE(w.add(at(0, 2, 1, 0, /*waiting=*/2)));
  EXPECT_FALSE(w.is_open());
  EXPECT_FALSE(w.add(at(100, 4, 50, 190)));  // opens here
  EXPECT_TRUE(w.is_open());
  EXPECT_FALSE(w.add(at(200, 4, 140, 550)));  // 90 steps: not yet
  auto r = w.add(at(300, 4, 250, 990));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->steps, 200);
  EXPECT_EQ(r->tokens, 800);
  EXPECT_DOUBLE_EQ(r->seconds, 0.2);
  EXPECT_EQ(r->detok_messages, 800);
  EXPECT_EQ(r->detok_bytes, 8000);
  EXPECT_EQ(r->generation_tokens_at_end, 990);
  EXPECT_EQ(w.windows_dropped(), 0);
}

TEST(StepWindow, ToleratesTwoPlansInFlightAtEachEnd) {
  StepWindow w(8, 10);
  w.add(at(0, 8, 100, 784));           // 2 plans in flight: 98 steps of results
  auto r = w.add(at(100, 8, 200, 1600));  // none in flight: 16 tokens more than 8 x 100
  ASSERT_TRUE(r);
  EXPECT_EQ(r->tokens - 8 * r->steps, 16);
}

TEST(StepWindow, ToleratesAsManyStepsAsPlansInFlight) {
  StepWindow deep(8, 10, 4);
  deep.add(at(0, 8, 100, 768));  // 4 plans in flight: 96 steps of results
  auto r = deep.add(at(100, 8, 200, 1600));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->tokens - 8 * r->steps, 32);
  StepWindow shallow(8, 10, 2);  // the same figures are too far apart for 2 plans in flight
  shallow.add(at(0, 8, 100, 768));
  EXPECT_FALSE(shallow.add(at(100, 8, 200, 1600)));
  EXPECT_EQ(shallow.windows_dropped(), 1);
}

TEST(StepWindow, AWindowThatHeldPrefillStepsStartsAgain) {
  StepWindow w(4, 10);
  w.add(at(0, 4, 5, 2));                    // all admitted, prefill not done
  EXPECT_FALSE(w.add(at(100, 4, 105, 380)));  // 378 tokens in 100 steps, not ~400: dropped
  EXPECT_EQ(w.windows_dropped(), 1);
  EXPECT_TRUE(w.is_open());
  auto r = w.add(at(200, 4, 205, 780));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->steps, 100);
  EXPECT_DOUBLE_EQ(r->seconds, 0.1);
}

TEST(StepWindow, ARequestLeavingTheWindowIsAnError) {
  StepWindow finished(4, 1000);
  finished.add(at(0, 4, 10, 30));
  EXPECT_THROW(finished.add(at(100, 3, 60, 230)), std::runtime_error);

  StepWindow preempted(4, 1000);
  preempted.add(at(0, 4, 10, 30));
  StatsSample s = at(100, 4, 60, 230);
  s.stats.num_preemptions = 1;
  EXPECT_THROW(preempted.add(s), std::runtime_error);
}

}  // namespace
}  // namespace zinfer::bench
