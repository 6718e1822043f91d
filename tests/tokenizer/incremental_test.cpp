// IncrementalDecoder: pieces are whole UTF-8 characters and add up to decode(all ids), whether
// ids arrive one at a time or in bursts, with or without special tokens, after a prompt.
#include <random>

#include <gtest/gtest.h>

#include "actors/text/utf8.h"
#include "tests/tokenizer/test_data.h"

namespace zinfer::tok::testing {
namespace {

void check_streaming(const std::shared_ptr<const Tokenizer>& tok, const std::string& name, const std::string& text,
                     bool skip_special, size_t burst) {
  const auto ids = tok->encode(text, true);
  IncrementalDecoder decoder(tok, skip_special);
  std::string streamed;
  for (size_t i = 0; i < ids.size(); i += burst) {
    const size_t n = std::min(burst, ids.size() - i);
    const std::string piece = decoder.push(std::span<const int32_t>(ids).subspan(i, n));
    ASSERT_EQ(utf8::find_invalid(piece), std::string::npos) << name << ": half a character emitted for " << text;
    streamed += piece;
  }
  streamed += decoder.flush();
  EXPECT_EQ(streamed, tok->decode(ids, skip_special)) << name << " burst " << burst << " text: " << text;
}

TEST(IncrementalDecoder, AddsUpToDecodeOverCorpus) {
  for (const std::string& name : kTokenizerNames) {
    auto tok = load(name);
    ASSERT_TRUE(tok) << name;
    for (const std::string& text : corpus()) {
      check_streaming(tok, name, text, false, 1);
      check_streaming(tok, name, text, true, 1);
      check_streaming(tok, name, text, false, 3);
    }
  }
}

// Invariant 6 (docs/architecture.md): text deltas end on whole UTF-8 characters.
TEST(IncrementalDecoder, HoldsBackAPartialCharacter) {
  auto tok = load("llama2");
  ASSERT_TRUE(tok);
  // U+1FAE0 goes out as four byte tokens; nothing may be emitted until the fourth arrives.
  const std::vector<int32_t> bytes{*tok->token_to_id("<0xF0>"), *tok->token_to_id("<0x9F>"),
                                   *tok->token_to_id("<0xAB>"), *tok->token_to_id("<0xA0>")};
  IncrementalDecoder decoder(tok, false, {*tok->token_to_id("\xE2\x96\x81Hello")});
  for (size_t i = 0; i + 1 < bytes.size(); ++i) EXPECT_EQ(decoder.push(std::span(&bytes[i], 1)), "");
  EXPECT_EQ(decoder.push(std::span(&bytes[3], 1)), "\xF0\x9F\xAB\xA0");
  EXPECT_EQ(decoder.flush(), "");
}

TEST(IncrementalDecoder, PromptIsContextNotOutput) {
  auto tok = load("llama2");
  ASSERT_TRUE(tok);
  const auto prompt = tok->encode("Hello", true);
  const auto next = tok->encode("world", false);  // "▁world"
  IncrementalDecoder decoder(tok, true, prompt);
  // The space belongs to "▁world": a decoder that restarted at "▁world" would strip it.
  EXPECT_EQ(decoder.push(next), " world");
}

TEST(IncrementalDecoder, IncompleteTailBecomesReplacementOnFlush) {
  auto tok = load("llama2");
  ASSERT_TRUE(tok);
  IncrementalDecoder decoder(tok, false);
  const std::vector<int32_t> ids{*tok->token_to_id("<0xE4>"), *tok->token_to_id("<0xBD>")};
  EXPECT_EQ(decoder.push(ids), "");
  EXPECT_EQ(decoder.flush(), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace zinfer::tok::testing

namespace zinfer::tok::testing {
namespace {

// Invariant 6 (docs/architecture.md): text deltas end on whole UTF-8 characters.
// What a model may emit: arbitrary ids, byte tokens in any order, special tokens. Pieces stay
// whole characters and add up to decode(all) wherever that has no U+FFFD (an invalid byte run
// may rewrite text already streamed, see tokenizer.h).
TEST(IncrementalDecoder, ArbitraryIdsStreamWholeCharacters) {
  for (const std::string& name : kTokenizerNames) {
    auto tok = load(name);
    ASSERT_TRUE(tok) << name;
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int32_t> any_id(0, tok->vocab_size() - 1);
    const auto hello = tok->encode("h\xC3\xA9llo \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80", false);
    for (int round = 0; round < 300; ++round) {
      std::vector<int32_t> ids;
      for (int i = 0; i < 12; ++i) ids.push_back(rng() % 3 == 0 ? hello[rng() % hello.size()] : any_id(rng));
      for (bool skip : {false, true}) {
        IncrementalDecoder decoder(tok, skip);
        std::string streamed;
        for (int32_t id : ids) {
          const std::string piece = decoder.push(std::span<const int32_t>(&id, 1));
          ASSERT_EQ(utf8::find_invalid(piece), std::string::npos) << name;
          streamed += piece;
        }
        streamed += decoder.flush();
        const std::string whole = tok->decode(ids, skip);
        if (whole.find("\xEF\xBF\xBD") == std::string::npos) {
          EXPECT_EQ(streamed, whole) << name << " ids " << ::testing::PrintToString(ids);
        } else {
          EXPECT_FALSE(streamed.empty()) << name << " ids " << ::testing::PrintToString(ids);
        }
      }
    }
  }
}

}  // namespace
}  // namespace zinfer::tok::testing
