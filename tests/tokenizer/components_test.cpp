// The pipeline stages on small hand-made tokenizer.json files, where every expected id can be
// worked out by hand: BPE options, added-token flags, pre-tokenizer split behaviours,
// normalizers, decoders, and the errors for what is not supported.
#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "actors/text/utf8.h"
#include "actors/tokenizer/components.h"
#include "actors/tokenizer/tokenizer.h"

namespace zinfer::tok::testing {
namespace {

using nlohmann::json;
using Ids = std::vector<int32_t>;

// A tokenizer.json around a BPE model; the other stages are set by the caller.
json bpe_file(const json& vocab, const json& merges, const json& model_extra = json::object()) {
  json model = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
  model.update(model_extra);
  return {{"model", model}, {"added_tokens", json::array()}, {"normalizer", nullptr}, {"pre_tokenizer", nullptr},
          {"post_processor", nullptr}, {"decoder", nullptr}};
}

std::shared_ptr<const Tokenizer> build(const json& file) { return Tokenizer::from_json(file.dump(), "test.json"); }

std::vector<std::string> split_with(const json& pre_tokenizer, const std::string& text, bool at_start = true) {
  auto p = make_pre_tokenizer(pre_tokenizer, "test.json");
  Pieces in, out;
  in.add(text);
  p->split(in, at_start, out);
  std::vector<std::string> pieces;
  for (size_t i = 0; i < out.size(); ++i) pieces.emplace_back(out[i]);
  return pieces;
}

std::string normalize_with(const json& normalizer, std::string text) {
  make_normalizer(normalizer, "test.json")->normalize(text);
  return text;
}

std::string decode_with(const json& decoder, std::vector<std::string> tokens) {
  make_decoder(decoder, "test.json")->decode_chain(tokens);
  std::string out;
  for (const auto& t : tokens) out += t;
  return out;
}

const json kAbcVocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}};

TEST(Bpe, LowestRankMergesFirst) {
  // b+c outranks a+b: abc -> a bc -> abc. With a+b first: ab c, and no "ab c" merge -> [ab, c].
  EXPECT_EQ(build(bpe_file(kAbcVocab, {"b c", "a bc"}))->encode("abc"), (Ids{5}));
  EXPECT_EQ(build(bpe_file(kAbcVocab, {"a b", "b c", "a bc"}))->encode("abc"), (Ids{3, 2}));
}

TEST(Bpe, MergesAsStringsOrPairsAreTheSame) {
  EXPECT_EQ(build(bpe_file(kAbcVocab, json::array({json::array({"b", "c"}), json::array({"a", "bc"})})))->encode("abc"),
            (Ids{5}));
}

TEST(Bpe, LeftmostPairWinsATie) {
  const json vocab = {{"a", 0}, {"aa", 1}};
  EXPECT_EQ(build(bpe_file(vocab, {"a a"}))->encode("aaa"), (Ids{1, 0}));
}

TEST(Bpe, LongWordsTakeTheHeapPathAndAgree) {
  // 64 symbols exceed the short-word scan; "a a" then "aa aa" pair everything up.
  const json vocab = {{"a", 0}, {"aa", 1}, {"aaaa", 2}};
  const auto tok = build(bpe_file(vocab, {"a a", "aa aa"}));
  EXPECT_EQ(tok->encode(std::string(64, 'a')), Ids(16, 2));
  EXPECT_EQ(tok->encode(std::string(67, 'a')), ([] { Ids v(16, 2); v.push_back(1); v.push_back(0); return v; }()));
}

TEST(Bpe, UnknownCharactersFuseOrNot) {
  const json vocab = {{"a", 0}, {"<unk>", 1}};
  EXPECT_EQ(build(bpe_file(vocab, json::array(), {{"unk_token", "<unk>"}, {"fuse_unk", true}}))->encode("axya"),
            (Ids{0, 1, 0}));
  EXPECT_EQ(build(bpe_file(vocab, json::array(), {{"unk_token", "<unk>"}, {"fuse_unk", false}}))->encode("axya"),
            (Ids{0, 1, 1, 0}));
  // Without an unk token an unknown character is dropped.
  EXPECT_EQ(build(bpe_file(vocab, json::array()))->encode("axya"), (Ids{0, 0}));
}

TEST(Bpe, ByteFallbackSpellsOutUnknownCharacters) {
  json vocab = {{"a", 0}, {"<unk>", 1}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = 2 + b;
  }
  const auto tok = build(bpe_file(vocab, json::array(), {{"unk_token", "<unk>"}, {"byte_fallback", true}}));
  EXPECT_EQ(tok->encode("a\xC3\xA9"), (Ids{0, 2 + 0xC3, 2 + 0xA9}));
}

TEST(Bpe, ContinuingSubwordPrefixAndEndOfWordSuffix) {
  const json prefixed = {{"a", 0}, {"##b", 1}, {"ab", 2}};
  EXPECT_EQ(build(bpe_file(prefixed, {"a ##b"}, {{"continuing_subword_prefix", "##"}}))->encode("ab"), (Ids{2}));
  const json suffixed = {{"a", 0}, {"b</w>", 1}, {"ab</w>", 2}};
  EXPECT_EQ(build(bpe_file(suffixed, {"a b</w>"}, {{"end_of_word_suffix", "</w>"}}))->encode("ab"), (Ids{2}));
}

TEST(Bpe, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  // "abc" is in the vocabulary but no merge reaches it from a b c (only a+b exists).
  const json merges = {"a b"};
  EXPECT_EQ(build(bpe_file(kAbcVocab, merges))->encode("abc"), (Ids{3, 2}));
  EXPECT_EQ(build(bpe_file(kAbcVocab, merges, {{"ignore_merges", true}}))->encode("abc"), (Ids{5}));
}

// Character vocabulary for the added-token tests: every letter used is a token of its own.
json char_file() {
  json vocab = json::object();
  int id = 0;
  for (char c : std::string(" abx<m>_")) vocab[std::string(1, c)] = id++;
  return bpe_file(vocab, json::array());
}

json added(const std::string& content, int id, json flags = json::object()) {
  json t = {{"id", id},       {"content", content}, {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", false}, {"special", true}};
  t.update(flags);
  return t;
}

TEST(AddedTokens, LongestMatchFirst) {
  json file = char_file();
  file["added_tokens"] = {added("<m>", 100), added("<m>>", 101)};
  EXPECT_EQ(build(file)->encode("a<m>>b"), (Ids{1, 101, 2}));
  EXPECT_EQ(build(file)->encode("a<m>b"), (Ids{1, 100, 2}));
}

TEST(AddedTokens, LstripAndRstripTakeTheSpaces) {
  json file = char_file();
  file["added_tokens"] = {added("<m>", 100, {{"lstrip", true}})};
  EXPECT_EQ(build(file)->encode("a  <m> b"), (Ids{1, 100, 0, 2}));
  file["added_tokens"] = {added("<m>", 100, {{"rstrip", true}})};
  EXPECT_EQ(build(file)->encode("a <m>  b"), (Ids{1, 0, 100, 2}));
}

TEST(AddedTokens, SingleWordOnlyMatchesAWholeWord) {
  json file = char_file();
  file["added_tokens"] = {added("x", 100, {{"single_word", true}})};
  const auto tok = build(file);
  EXPECT_EQ(tok->encode("a x b"), (Ids{1, 0, 100, 0, 2}));
  EXPECT_EQ(tok->encode("axb"), (Ids{1, 3, 2}));   // inside a word: the plain character
  EXPECT_EQ(tok->encode("x_"), (Ids{3, 7}));       // '_' counts as a word character
  EXPECT_EQ(tok->encode("\xCC\x81x"), (Ids{3}));   // so does a combining mark (U+0301, not in the vocabulary)
}

TEST(AddedTokens, NormalizedTokensMatchNormalizedText) {
  json file = char_file();
  file["normalizer"] = {{"type", "Lowercase"}};
  // Its content is normalized too ("AB" -> "ab") and found in the lowercased text.
  file["added_tokens"] = {added("AB", 100, {{"normalized", true}, {"special", false}})};
  const auto tok = build(file);
  EXPECT_EQ(tok->encode("xAbx"), (Ids{3, 100, 3}));
  EXPECT_FALSE(tok->is_special(100));
  EXPECT_EQ(tok->decode(Ids{3, 100}, true), "x AB");  // no decoder: tokens joined by spaces
}

TEST(AddedTokens, SkipSpecialTokensOnDecode) {
  json file = char_file();
  file["added_tokens"] = {added("<m>", 100)};
  file["decoder"] = {{"type", "Fuse"}};
  const auto tok = build(file);
  EXPECT_EQ(tok->decode(Ids{1, 100, 2}), "a<m>b");
  EXPECT_EQ(tok->decode(Ids{1, 100, 2}, true), "ab");
  EXPECT_EQ(tok->decode(Ids{1, 999, 2}), "ab");  // unknown ids are dropped
  EXPECT_EQ(tok->vocab_size(), 101);
  EXPECT_EQ(tok->id_to_token(999), "");
}

TEST(PreTokenizers, SplitBehaviours) {
  auto split = [](const char* behavior) {
    return split_with({{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", false}},
                      "a-b--c");
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(split("Removed"), (V{"a", "b", "c"}));
  EXPECT_EQ(split("Isolated"), (V{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(split("MergedWithPrevious"), (V{"a-", "b-", "-", "c"}));
  EXPECT_EQ(split("MergedWithNext"), (V{"a", "-b", "-", "-c"}));
  EXPECT_EQ(split("Contiguous"), (V{"a", "-", "b", "--", "c"}));
}

const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

TEST(PreTokenizers, Llama3RegexWithLookAhead) {
  const json split = {{"type", "Split"}, {"pattern", {{"Regex", kLlama3Pattern}}}, {"behavior", "Isolated"}, {"invert", false}};
  using V = std::vector<std::string>;
  EXPECT_EQ(split_with(split, "Hello   world  \n\n x"), (V{"Hello", "  ", " world", "  \n\n", " x"}));
  EXPECT_EQ(split_with(split, "I'LL 12345"), (V{"I", "'LL", " ", "123", "45"}));
  // \s means what Oniguruma says: U+180E (a format character) is not whitespace, so it joins "!".
  EXPECT_EQ(split_with(split, "x!\xE1\xA0\x8E"), (V{"x", "!\xE1\xA0\x8E"}));
}

TEST(PreTokenizers, ByteLevelMapsEveryByte) {
  using V = std::vector<std::string>;
  const json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}};
  EXPECT_EQ(split_with(byte_level, " \xC3\xA9\n"), (V{"\xC4\xA0\xC3\x83\xC2\xA9\xC4\x8A"}));  // "ĠÃ©Ċ"
  const json gpt2 = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}};
  EXPECT_EQ(split_with(gpt2, "Hi there"), (V{"\xC4\xA0Hi", "\xC4\xA0there"}));
}

TEST(PreTokenizers, MetaspaceReplacesAndSplits) {
  using V = std::vector<std::string>;
  const std::string m = "\xE2\x96\x81";
  const json always = {{"type", "Metaspace"}, {"replacement", m}, {"prepend_scheme", "always"}, {"split", true}};
  EXPECT_EQ(split_with(always, "Hey  friend"), (V{m + "Hey", m, m + "friend"}));
  const json first = {{"type", "Metaspace"}, {"replacement", m}, {"prepend_scheme", "first"}, {"split", false}};
  EXPECT_EQ(split_with(first, "a b", true), (V{m + "a" + m + "b"}));
  EXPECT_EQ(split_with(first, "a b", false), (V{"a" + m + "b"}));
}

TEST(PreTokenizers, DigitsAndWhitespaceSplit) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_with({{"type", "Digits"}, {"individual_digits", true}}, "ab12"), (V{"ab", "1", "2"}));
  EXPECT_EQ(split_with({{"type", "Digits"}, {"individual_digits", false}}, "ab12c"), (V{"ab", "12", "c"}));
  EXPECT_EQ(split_with({{"type", "WhitespaceSplit"}}, " a\t b\n"), (V{"a", "b"}));
}

TEST(Normalizers, CommonOnes) {
  EXPECT_EQ(normalize_with({{"type", "NFC"}}, "e\xCC\x81"), "\xC3\xA9");
  EXPECT_EQ(normalize_with({{"type", "NFD"}}, "\xC3\xA9"), "e\xCC\x81");
  EXPECT_EQ(normalize_with({{"type", "NFKC"}}, "\xEF\xAC\x81"), "fi");
  EXPECT_EQ(normalize_with({{"type", "Lowercase"}}, "\xC4\xB0STANBUL"), "i\xCC\x87stanbul");
  EXPECT_EQ(normalize_with({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}, "\xE3\x80\x80 a \n"), "a");
  EXPECT_EQ(normalize_with({{"type", "Prepend"}, {"prepend", "_"}}, ""), "");
  EXPECT_EQ(normalize_with({{"type", "Sequence"},
                            {"normalizers", {{{"type", "Prepend"}, {"prepend", "_"}},
                                             {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "_"}}}}},
                           "a b"),
            "_a_b");
  EXPECT_EQ(normalize_with({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}}, "a   b  c"), "a b c");
}

// The NFC shortcut (skip utf8proc when nothing could change) must never skip real work: check
// it on every two-character canonical decomposition, i.e. every pair that NFC could compose.
TEST(Normalizers, NfcShortcutAgreesWithUtf8proc) {
  const auto nfc = make_normalizer({{"type", "NFC"}}, "test.json");
  int checked = 0;
  for (char32_t cp = 0xA0; cp < 0x30000; ++cp) {
    if (cp >= 0xD800 && cp < 0xE000) continue;
    utf8proc_int32_t buffer[8];
    int last_boundclass = 0;
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buffer, 8, UTF8PROC_DECOMPOSE,
                                           &last_boundclass);
    if (n < 1) continue;
    std::string decomposed;
    for (int i = 0; i < n; ++i) utf8::append(decomposed, static_cast<char32_t>(buffer[i]));
    for (const std::string& text : {decomposed, utf8::encode(cp), std::string("a").append(utf8::encode(cp))}) {
      std::string ours = text;
      nfc->normalize(ours);
      utf8proc_uint8_t* ref = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()));
      ASSERT_EQ(ours, std::string(reinterpret_cast<const char*>(ref))) << "U+" << std::hex << uint32_t(cp);
      std::free(ref);
      ++checked;
    }
  }
  EXPECT_GT(checked, 100000);
}

TEST(Decoders, ChainsOfTheRealFiles) {
  const std::string m = "\xE2\x96\x81";
  const json llama2 = {{"type", "Sequence"},
                       {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", m}}}, {"content", " "}},
                                     {{"type", "ByteFallback"}},
                                     {{"type", "Fuse"}},
                                     {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  EXPECT_EQ(decode_with(llama2, {m + "Hi", "<0xE2>", "<0x82>", "<0xAC>", m + "x"}), "Hi\xE2\x82\xAC x");
  EXPECT_EQ(decode_with(llama2, {"<0xE2>", "<0x82>", "a"}), "\xEF\xBF\xBD\xEF\xBF\xBD" "a");  // one U+FFFD per byte
  const json byte_level = {{"type", "ByteLevel"}};
  EXPECT_EQ(decode_with(byte_level, {"\xC4\xA0Hi", "<|x|>", "\xC3\x83"}), " Hi<|x|>\xEF\xBF\xBD");  // lone 0xC3
  EXPECT_EQ(decode_with(byte_level, {"\xE2\x96\x81"}), "\xE2\x96\x81");  // not in the byte map: kept as is
  const json metaspace = {{"type", "Metaspace"}, {"replacement", m}, {"prepend_scheme", "always"}};
  EXPECT_EQ(decode_with(metaspace, {m + "Hey", m + "friend"}), "Hey friend");
  // Every replacement character of the first token goes, as in HF.
  EXPECT_EQ(decode_with(metaspace, {m + "a" + m + "b", m + "c"}), "ab c");
}

TEST(Errors, UnsupportedPartsAreNamedWithTheFile) {
  auto message_of = [](const json& file) {
    try {
      Tokenizer::from_json(file.dump(), "models/x/tokenizer.json");
    } catch (const TokenizerError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using ::testing::AllOf;
  using ::testing::HasSubstr;
  json unigram = bpe_file(kAbcVocab, json::array());
  unigram["model"]["type"] = "Unigram";
  EXPECT_THAT(message_of(unigram), AllOf(HasSubstr("Unigram"), HasSubstr("models/x/tokenizer.json")));
  json normalizer = bpe_file(kAbcVocab, json::array());
  normalizer["normalizer"] = {{"type", "Precompiled"}};
  EXPECT_THAT(message_of(normalizer), AllOf(HasSubstr("Precompiled"), HasSubstr("models/x/tokenizer.json")));
  json pre = bpe_file(kAbcVocab, json::array());
  pre["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
  EXPECT_THAT(message_of(pre), AllOf(HasSubstr("UnicodeScripts"), HasSubstr("models/x/tokenizer.json")));
  json decoder = bpe_file(kAbcVocab, json::array());
  decoder["decoder"] = {{"type", "CTC"}};
  EXPECT_THAT(message_of(decoder), HasSubstr("CTC"));
  EXPECT_THAT(message_of(bpe_file(kAbcVocab, {"a zz"})), HasSubstr("'zz'"));
  json bad_regex = bpe_file(kAbcVocab, json::array());
  bad_regex["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  EXPECT_THAT(message_of(bad_regex), HasSubstr("(unclosed"));
  EXPECT_THROW(Tokenizer::from_json("{not json", "broken.json"), TokenizerError);
  try {
    Tokenizer::from_file("/nonexistent/dir/tokenizer.json");
    FAIL() << "no error for a missing file";
  } catch (const TokenizerError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/dir/tokenizer.json"));
  }
}

}  // namespace
}  // namespace zinfer::tok::testing
