// The UTF-8 module that the tokenizer (Rust `char` semantics) and the chat template (Python `str`
// semantics) share: decoding, encoding, validation, lossy conversion, code point counts and
// offsets, character classes, stripping and case mapping.
#include "actors/text/utf8.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zinfer::utf8 {
namespace {

const std::string kEuro = "\xE2\x82\xAC";       // U+20AC, 3 bytes
const std::string kEmoji = "\xF0\x9F\x98\x80";  // U+1F600, 4 bytes
const std::string kEAcute = "\xC3\xA9";         // U+00E9, 2 bytes

TEST(Utf8, EncodeAndDecodeRoundTripEveryLength) {
  for (char32_t cp : {char32_t(0x41), char32_t(0xE9), char32_t(0x20AC), char32_t(0x1F600), char32_t(0x10FFFF)}) {
    const std::string bytes = encode(cp);
    EXPECT_EQ(bytes.size(), char_len(static_cast<unsigned char>(bytes[0])));
    size_t pos = 0;
    EXPECT_EQ(next(bytes, pos), cp);
    EXPECT_EQ(pos, bytes.size());
  }
  EXPECT_EQ(encode(0x20AC), kEuro);
  std::string out = "a";
  append(out, 0x1F600);
  EXPECT_EQ(out, "a" + kEmoji);
}

TEST(Utf8, NextNeverReadsPastMalformedInput) {
  // A cut-off sequence, a stray continuation byte and an invalid lead byte each decode as their
  // byte value and advance by one.
  for (const std::string s : {std::string("\xE2\x82"), std::string("\x82"), std::string("\xFF"),
                              std::string("\xE2" "a")}) {
    size_t pos = 0;
    EXPECT_EQ(next(s, pos), static_cast<unsigned char>(s[0]));
    EXPECT_EQ(pos, 1u);
  }
  EXPECT_EQ(char_len(0xFF), 1u);
  EXPECT_EQ(char_len(0x80), 1u);
}

TEST(Utf8, LastDecodesTheFinalCharacter) {
  EXPECT_EQ(last("ab"), U'b');
  EXPECT_EQ(last("a" + kEmoji), char32_t(0x1F600));
  EXPECT_EQ(last(kEuro), char32_t(0x20AC));
}

TEST(Utf8, FindInvalidReportsTheFirstBadOffset) {
  EXPECT_EQ(find_invalid("a" + kEuro + kEmoji), std::string_view::npos);
  EXPECT_EQ(find_invalid("ab\xC0\x80"), 2u);                // overlong
  EXPECT_EQ(find_invalid(kEuro + "\xED\xA0\x80"), 3u);    // surrogate
  EXPECT_EQ(find_invalid("x\xF0\x9F\x98"), 1u);             // truncated
  EXPECT_EQ(find_invalid("\xF5\x80\x80\x80"), 0u);          // beyond U+10FFFF
}

TEST(Utf8, LossyReplacesMaximalSubparts) {
  EXPECT_EQ(lossy("a\xF0\x9F\x98"), "a\xEF\xBF\xBD");                            // truncated 4-byte: one U+FFFD
  EXPECT_EQ(lossy("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");                      // overlong: two
  EXPECT_EQ(lossy("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");      // surrogate: three
  EXPECT_EQ(lossy("\xE2\x82\xAC"), "\xE2\x82\xAC");
}

TEST(Utf8, LengthAndOffsetsCountCodePoints) {
  const std::string s = "a" + kEAcute + kEuro + kEmoji;
  EXPECT_EQ(length(s), 4u);
  EXPECT_EQ(offsets(s), (std::vector<size_t>{0, 1, 3, 6, 10}));
  EXPECT_EQ(length(""), 0u);
  EXPECT_EQ(offsets(""), (std::vector<size_t>{0}));
}

TEST(Utf8, WhitespaceFollowsRustAndSpaceFollowsPython) {
  for (char32_t cp : {char32_t(' '), char32_t('\t'), char32_t(0xA0), char32_t(0x2003), char32_t(0x3000)}) {
    EXPECT_TRUE(is_whitespace(cp)) << uint32_t(cp);
    EXPECT_TRUE(is_space(cp)) << uint32_t(cp);
  }
  // Python's str.isspace also counts the information separators; Rust's is_whitespace does not.
  EXPECT_FALSE(is_whitespace(0x1C));
  EXPECT_TRUE(is_space(0x1C));
  EXPECT_TRUE(is_space(0x1F));
  EXPECT_FALSE(is_space(0x200B));  // zero-width space is not White_Space
  EXPECT_FALSE(is_whitespace('a'));
}

TEST(Utf8, CharacterClasses) {
  EXPECT_TRUE(is_alpha('z'));
  EXPECT_TRUE(is_alpha(0xE9));
  EXPECT_FALSE(is_alpha('1'));
  EXPECT_TRUE(is_digit('7'));
  EXPECT_TRUE(is_digit(0x0663));   // ARABIC-INDIC DIGIT THREE (Nd)
  EXPECT_FALSE(is_digit(0x00B2));  // superscript two is No
  EXPECT_TRUE(is_numeric(0x00B2));
  EXPECT_TRUE(is_numeric(0x2167));  // ROMAN NUMERAL EIGHT (Nl)
  EXPECT_TRUE(is_alphanumeric(0xE9));
  EXPECT_TRUE(is_alphanumeric(0x00B2));
  EXPECT_FALSE(is_alphanumeric('_'));
  EXPECT_TRUE(is_punctuation('!'));
  EXPECT_TRUE(is_punctuation(0x3001));  // IDEOGRAPHIC COMMA
  EXPECT_FALSE(is_punctuation('+'));    // a symbol (Sm), not punctuation
}

TEST(Utf8, StripAsPython) {
  const std::string nbsp = "\xC2\xA0";
  EXPECT_EQ(strip(nbsp + " a b\t\n", std::nullopt, true, true), "a b");
  EXPECT_EQ(strip("  a  ", std::nullopt, true, false), "a  ");
  EXPECT_EQ(strip("  a  ", std::nullopt, false, true), "  a");
  EXPECT_EQ(strip(kEuro + "x" + kEuro + "y", std::optional<std::string>(kEuro + "y"), true, true), "x");
  EXPECT_EQ(strip("   ", std::nullopt, true, true), "");
}

TEST(Utf8, CaseMappingPerCodePoint) {
  EXPECT_EQ(to_upper("abc" + kEAcute), "ABC\xC3\x89");
  EXPECT_EQ(to_lower("\xC3\x89" "X"), kEAcute + "x");
  EXPECT_EQ(to_upper(char32_t(0x3B1)), char32_t(0x391));  // Greek alpha
  EXPECT_EQ(to_lower(char32_t('Q')), char32_t('q'));
  EXPECT_EQ(to_title(char32_t(0x01C6)), char32_t(0x01C5));  // dž -> Dž
  EXPECT_EQ(to_upper(kEmoji), kEmoji);
}

}  // namespace
}  // namespace zinfer::utf8
