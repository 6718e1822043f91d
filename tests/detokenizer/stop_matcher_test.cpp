// Stop strings over streamed text (actors/detokenizer/stop_matcher.h): what is released, what is
// held back, and that released text never holds a stop string or half a character.
#include "actors/detokenizer/stop_matcher.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zinfer::actors {
namespace {

TEST(StopMatcher, WithoutStopsEverythingPassesAtOnce) {
  StopMatcher m({});
  EXPECT_EQ(m.feed("abc").text, "abc");
  EXPECT_FALSE(m.feed("d").stopped);
  EXPECT_EQ(m.finish(), "");
}

TEST(StopMatcher, EmptyStopStringsAreIgnored) {
  StopMatcher m({"", "z"});
  const auto out = m.feed("abc");
  EXPECT_EQ(out.text, "abc");
  EXPECT_FALSE(out.stopped);
}

TEST(StopMatcher, TextBeforeTheStopIsReleasedAndNothingAfter) {
  StopMatcher m({"o w"});
  auto a = m.feed("Hel");
  EXPECT_EQ(a.text, "Hel");
  EXPECT_FALSE(a.stopped);
  auto b = m.feed("lo world");
  EXPECT_EQ(b.text, "l");
  EXPECT_TRUE(b.stopped);
  auto c = m.feed("more");
  EXPECT_EQ(c.text, "");
  EXPECT_TRUE(c.stopped);
  EXPECT_EQ(m.finish(), "");
}

TEST(StopMatcher, APossibleBeginningIsHeldBackUntilItIsDecided) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.feed("abcE").text, "abc");
  EXPECT_EQ(m.feed("N").text, "");
  auto out = m.feed("x");
  EXPECT_EQ(out.text, "ENx");  // it did not become the stop string
  EXPECT_FALSE(out.stopped);
  EXPECT_EQ(m.feed("yE").text, "y");
  EXPECT_EQ(m.finish(), "E");  // the end of the sample releases what was held
}

TEST(StopMatcher, TheEarliestOccurrenceWins) {
  StopMatcher m({"cd", "bcde"});
  auto out = m.feed("abcdef");
  EXPECT_EQ(out.text, "a");
  EXPECT_TRUE(out.stopped);
}

// Invariant 6 (docs/architecture.md): text deltas end on whole UTF-8 characters.
TEST(StopMatcher, HeldTextIsWholeCharacters) {
  const std::string euro = "\xE2\x82\xAC";
  StopMatcher m({euro + "x"});
  EXPECT_EQ(m.feed("a" + euro).text, "a");
  EXPECT_EQ(m.feed("y").text, euro + "y");
}

// Invariant 6 (docs/architecture.md): stop strings are matched in the detokenizer; released text
// never contains a stop string.
TEST(StopMatcher, RandomSplitsNeverReleaseAStopString) {
  std::mt19937 rng(17);
  const std::vector<std::string> stops = {"ab", "bba", "c"};
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 20);
    for (int i = 0; i < n; ++i) text.push_back("abc"[rng() % 3]);
    StopMatcher m(stops);
    std::string released;
    bool stopped = false;
    for (size_t pos = 0; pos < text.size() && !stopped;) {
      const size_t len = 1 + rng() % 4;
      auto out = m.feed(text.substr(pos, len));
      released += out.text;
      stopped = out.stopped;
      pos += len;
    }
    if (!stopped) released += m.finish();
    // The released text is the text up to its first stop string (or all of it).
    size_t first = std::string::npos;
    for (const auto& s : stops) first = std::min(first, text.find(s));
    EXPECT_EQ(released, text.substr(0, first)) << text;
    EXPECT_EQ(stopped, first != std::string::npos) << text;
  }
}

// vLLM's stop_reason names the stop string that ended the sample; with include_stop_str_in_output
// the text keeps it.
TEST(StopMatcher, TellsWhichStopMatchedAndKeepsItWhenAsked) {
  StopMatcher drop({"END", "ND"});
  auto a = drop.feed("abcE");
  EXPECT_EQ(a.text, "abc");
  auto b = drop.feed("ND tail");
  EXPECT_TRUE(b.stopped);
  EXPECT_EQ(b.text, "");
  EXPECT_EQ(b.matched, "END");  // the earliest occurrence, though "ND" is in the text too

  StopMatcher keep({"ND", "END"}, /*keep_stop=*/true);
  EXPECT_EQ(keep.feed("abcE").text, "abc");
  auto c = keep.feed("ND tail");
  EXPECT_TRUE(c.stopped);
  EXPECT_EQ(c.text, "END");
  EXPECT_EQ(c.matched, "END");
  EXPECT_EQ(keep.feed("more").text, "");
}

}  // namespace
}  // namespace zinfer::actors
